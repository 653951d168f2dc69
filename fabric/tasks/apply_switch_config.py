"""Nornir task: make the CRS804 match its push plan through the RouterOS API."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.push.model import SwitchPlanDiff
from fabric.tasks.push_shell import ros_call, routeros


def apply_switch_config(task: Task, plan: SwitchPlanDiff) -> Result:
    """Lanes (speed, auto-negotiation, FEC, mtu, l2mtu), bridge + hw ports, LLDP and, where
    the topology is lossless, the switch QoS and LLDP DCBX, in the plan's order.

    Dry run: report the planned API calls, change nothing.
    """
    diff = plan_text(plan)
    if task.is_dry_run() or not plan.calls:
        return Result(host=task.host, result=diff, changed=bool(plan.calls), diff=diff)
    api = routeros(task)
    for call in plan.calls:
        args = call.args()
        if call.action == "set" and call.target is not None:
            args = {"numbers": call.target, **args}
        ros_call(api, call.path, call.action, args)
    return Result(host=task.host, result=diff, changed=True, diff=diff)


def plan_text(plan: SwitchPlanDiff) -> str:
    return "\n".join(str(c) for c in plan.calls)

