"""Nornir tasks of the nccl probe: find nccl-tests and mpirun on a Spark, and run the planned
nccl-tests jobs one after the other from rank 0 (each an mpirun over every rank)."""

from __future__ import annotations

from collections.abc import Sequence

from nornir.core.task import Result, Task

from fabric.facts import NcclFact
from fabric.probes.nccl import RUN_TIMEOUT_S, NcclJob, detect_script, nccl_fact, parse_detected
from fabric.remote.batch import exec_batch
from fabric.remote.exec import exec_script, spark_session

DETECT_TIMEOUT_S = 30.0


def find_nccl_tests(task: Task) -> Result:
    """Look for mpirun, all_reduce_perf and all_gather_perf (PATH, then the usual build
    folders). Result: path per tool, None where absent."""
    if task.is_dry_run():
        return Result(host=task.host, result={}, changed=False)
    conn = spark_session(task)
    _, out = exec_script(conn, detect_script(), DETECT_TIMEOUT_S)
    return Result(host=task.host, result=parse_detected(out), changed=False)


def run_nccl_tests(task: Task, jobs: Sequence[NcclJob]) -> Result:
    """Run every job whose rank 0 is this host, one at a time (they share every NIC), in one
    batched command. Result: one NcclFact per job (a failed run carries the reason)."""
    mine = [j for j in jobs if j.hosts[0] == task.host.name]
    if not mine or task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    conn = spark_session(task)
    outputs = exec_batch(conn, [j.command for j in mine], len(mine) * (RUN_TIMEOUT_S + 30),
                         parallel=False)
    facts: list[NcclFact] = [nccl_fact(j, o) for j, o in zip(mine, outputs, strict=True)]
    return Result(host=task.host, result=facts, changed=False)
