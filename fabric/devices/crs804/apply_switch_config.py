"""Nornir task: make the CRS804 match its push changeset through the RouterOS API."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.devices.crs804.model import SwitchChanges
from fabric.remote.shell import ros_call, routeros


def apply_switch_config(task: Task, changeset: SwitchChanges) -> Result:
    """Lanes (speed, auto-negotiation, FEC, mtu, l2mtu), bridge + hw ports, LLDP and, where
    the topology is lossless, the switch QoS and LLDP DCBX, in the changeset's order.

    Dry run: report the planned API calls, change nothing.
    """
    diff = change_text(changeset)
    if task.is_dry_run() or not changeset.calls:
        return Result(host=task.host, result=diff, changed=bool(changeset.calls), diff=diff)
    api = routeros(task)
    for call in changeset.calls:
        args = call.args()
        if call.action == "set" and call.target is not None:
            args = {"numbers": call.target, **args}
        ros_call(api, call.path, call.action, args)
    return Result(host=task.host, result=diff, changed=True, diff=diff)


def change_text(changeset: SwitchChanges) -> str:
    return "\n".join(str(c) for c in changeset.calls)

