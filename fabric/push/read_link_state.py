"""Nornir tasks: which links have no carrier yet (Spark twins) or are not `link-ok` (switch
lanes). Cheap reads, polled while links train after a push."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.collect.spark_commands import NETDEV_NAME
from fabric.collect.switch_facts import monitor_lanes
from fabric.remote.shell import routeros, sh_ok


def read_twin_carrier(task: Task, netdevs: tuple[str, ...]) -> Result:
    """The `netdevs` without carrier (down, absent or not trained yet); one command."""
    names = [n for n in netdevs if NETDEV_NAME.match(n)]
    if not names:
        return Result(host=task.host, result=[], changed=False)
    script = "; ".join(f"echo \"{n} $(cat /sys/class/net/{n}/carrier 2>/dev/null || echo 0)\""
                       for n in names)
    out = sh_ok(task, script)
    up = {line.split()[0] for line in out.splitlines()
          if len(line.split()) == 2 and line.split()[1] == "1"}
    return Result(host=task.host, result=[n for n in names if n not in up], changed=False)


def read_lane_status(task: Task, lanes: tuple[str, ...]) -> Result:
    """The switch `lanes` whose `monitor once` status is not `link-ok`; one API call."""
    if not lanes:
        return Result(host=task.host, result=[], changed=False)
    status = monitor_lanes(routeros(task), list(lanes))
    return Result(host=task.host, result=[lane for lane in lanes
                                           if status.get(lane, {}).get("status") != "link-ok"],
                  changed=False)
