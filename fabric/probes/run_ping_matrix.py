"""Nornir task: this host's share of the ping matrix, all pings in one parallel burst."""

from __future__ import annotations

from collections.abc import Sequence

from nornir.core.task import Result, Task

from fabric.probes.ping import PROBE_MAX_S, PingProbe, burst_script, read_burst
from fabric.remote.exec import exec_script, spark_session


def run_ping_matrix(task: Task, probes: Sequence[PingProbe], timeout_s: float = 60.0) -> Result:
    """Send every planned DF ping whose source is this host, all at once on the host, over its
    SSH session (one echo each, a retry only for one that failed). Result: one PingFact per
    probe (lost or refused pings carry the evidence)."""
    mine = [p for p in probes if p.src_host == task.host.name]
    if not mine or task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    conn = spark_session(task)
    _, out = exec_script(conn, burst_script(mine), max(timeout_s, PROBE_MAX_S + 10))
    return Result(host=task.host, result=read_burst(mine, out), changed=False)
