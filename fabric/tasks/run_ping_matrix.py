"""Nornir task: this host's share of the ping matrix, all pings in one batched command."""

from __future__ import annotations

from collections.abc import Sequence

from nornir.core.task import Result, Task

from fabric.facts import PingFact
from fabric.probes.batch import batch_script, split_batch
from fabric.probes.ping import COUNT, INTERVAL_S, WAIT_S, PingProbe, ping_fact
from fabric.tasks.remote_exec import exec_script


def run_ping_matrix(task: Task, probes: Sequence[PingProbe], timeout_s: float = 60.0) -> Result:
    """Send every planned DF ping whose source is this host, in parallel on the host, over its
    SSH session. Result: one PingFact per probe (lost or refused pings carry the evidence)."""
    mine = [p for p in probes if p.src_host == task.host.name]
    if not mine or task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    conn = task.host.get_connection("netmiko", task.nornir.config)
    budget = max(timeout_s, COUNT * INTERVAL_S + WAIT_S + 10)
    _, out = exec_script(conn, batch_script([p.command() for p in mine]), budget)
    facts: list[PingFact] = [ping_fact(p, job.text, job.exit_code)
                             for p, job in zip(mine, split_batch(out, len(mine)), strict=True)]
    return Result(host=task.host, result=facts, changed=False)
