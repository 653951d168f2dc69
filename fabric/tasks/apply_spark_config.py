"""Nornir task: make a Spark's fabric twins match its push plan (netplan file + runtime)."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.push.model import SparkPlan
from fabric.tasks.push_shell import sh_ok, write_file


def apply_spark_config(task: Task, plan: SparkPlan, has_netplan: bool) -> Result:
    """Write /etc/netplan/40-fabric.yaml and apply the planned runtime changes.

    Runtime: `netplan apply` where netplan exists, else the plan's `ip` commands (the lab);
    `mlnx_qos` commands either way. Dry run: report the plan, change nothing.
    """
    diff = plan_text(plan)
    if task.is_dry_run() or plan.changes == 0:
        return Result(host=task.host, result=diff, changed=plan.changes > 0, diff=diff)
    if plan.netplan_diff:
        write_file(task, plan.netplan_path, plan.netplan_new)
    ip_cmds = [c for c in plan.commands if c.startswith("ip ")]
    other = [c for c in plan.commands if not c.startswith("ip ")]
    if has_netplan:
        if plan.netplan_diff or ip_cmds:
            sh_ok(task, "netplan generate && netplan apply", timeout=120)
    else:
        for cmd in ip_cmds:
            sh_ok(task, cmd)
    for cmd in other:
        sh_ok(task, cmd)
    return Result(host=task.host, result=diff, changed=True, diff=diff)


def plan_text(plan: SparkPlan) -> str:
    """The plan as a reviewer reads it: netplan unified diff, then the commands."""
    lines = [plan.netplan_diff.rstrip("\n")] if plan.netplan_diff else []
    lines += [f"$ {c}" for c in plan.commands]
    return "\n".join(lines)
