"""Nornir task: which switch lanes are not `link-ok` yet. A cheap read, polled while links
train after a push."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.devices.crs804.facts import monitor_lanes
from fabric.remote.shell import routeros


def read_lane_status(task: Task, lanes: tuple[str, ...]) -> Result:
    """The switch `lanes` whose `monitor once` status is not `link-ok`; one API call."""
    if not lanes:
        return Result(host=task.host, result=[], changed=False)
    status = monitor_lanes(routeros(task), list(lanes))
    return Result(host=task.host, result=[lane for lane in lanes
                                           if status.get(lane, {}).get("status") != "link-ok"],
                  changed=False)
