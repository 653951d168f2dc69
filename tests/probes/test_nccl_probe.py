"""nccl-tests orchestration on recorded outputs: detection, the mpirun command from the launch
spec, the batched run on rank 0, and the nccl check's verdict (good passes, degraded fails
naming the hosts, absent tools skip with the reason)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import validators
from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.probes import run_nccl_tests as task_module
from fabric.probes.nccl import (
    NcclJob,
    detect_script,
    gid_index,
    nccl_fact,
    nccl_jobs,
    parse_detected,
    with_missing,
)
from fabric.remote import batch
from fabric.remote.batch import MARK, JobOutput
from tests.validators import builder

REAL = Path("/work/shared/fixtures/real-outputs")
GOOD = REAL / "nccl_tests_all_gather_dgx_spark_good.txt"
DEGRADED = REAL / "nccl_tests_all_gather_dgx_spark_degraded.txt"
TOOLS = {"mpirun": "/usr/bin/mpirun", "all_reduce_perf": "/opt/nccl-tests/build/all_reduce_perf",
         "all_gather_perf": "/opt/nccl-tests/build/all_gather_perf"}


@pytest.fixture(scope="module")
def star4() -> Intent:
    return builder.intent("star4")


@pytest.fixture(scope="module")
def healthy(star4: Intent) -> Facts:
    return builder.healthy(star4)


def _found(facts: Facts, **override: dict[str, str | None]) -> dict[str, dict[str, str | None]]:
    return {h: dict(override.get(h, TOOLS)) for h in facts.sparks}


def test_detect_output_reads_paths_and_absences() -> None:
    out = ("@@nccl-tool mpirun /usr/bin/mpirun\n@@nccl-tool all_reduce_perf -\n"
           "@@nccl-tool all_gather_perf /home/u/nccl-tests/build/all_gather_perf\n")
    assert parse_detected(out) == {"mpirun": "/usr/bin/mpirun", "all_reduce_perf": None,
                                   "all_gather_perf": "/home/u/nccl-tests/build/all_gather_perf"}
    assert "$HOME/nccl-tests/build" in detect_script()


def test_mpirun_from_rank0_with_the_launch_env(star4: Intent, healthy: Facts) -> None:
    jobs = nccl_jobs(star4, healthy, _found(healthy))
    assert [j.test for j in jobs] == ["all_reduce_perf", "all_gather_perf"]
    job = jobs[0]
    assert job.hosts == ("spark01", "spark02", "spark03", "spark04")
    cmd = job.command
    assert "mpirun -np 4 -H " in cmd and cmd.count(":1") >= 4
    assert cmd.endswith("/opt/nccl-tests/build/all_reduce_perf -b 512M -e 4G -f 2 -g 1")
    assert "-x NCCL_SOCKET_IFNAME==enp1s0f0np0" in cmd
    hca = next(p for p in cmd.split() if p.startswith("NCCL_IB_HCA="))
    assert len(hca.split("=", 2)[2].split(",")) == 2  # both twins of the port
    index = gid_index(star4, healthy, job.hosts)
    assert index is not None and f"-x NCCL_IB_GID_INDEX={index}" in cmd


def test_a_test_missing_anywhere_is_not_run(star4: Intent, healthy: Facts) -> None:
    found = _found(healthy, spark03={**TOOLS, "all_gather_perf": None})
    assert [j.test for j in nccl_jobs(star4, healthy, found)] == ["all_reduce_perf"]
    no_mpi = _found(healthy, spark01={**TOOLS, "mpirun": None})
    assert nccl_jobs(star4, healthy, no_mpi) == []


def _batched(*texts: str, codes: tuple[int, ...] = ()) -> str:
    out = []
    for i, text in enumerate(texts):
        code = codes[i] if i < len(codes) else 0
        out.append(f"{MARK} begin {i}\n{text.rstrip()}\n{MARK} end {i} exit={code}\n")
    return "".join(out)


def _run_task(monkeypatch: pytest.MonkeyPatch, jobs: list[NcclJob], output: str) -> Any:
    seen: list[str] = []

    def fake_exec(conn: object, script: str, timeout: float,
                  login: bool = False) -> tuple[int, str]:
        seen.append(script)
        return 0, output

    monkeypatch.setattr(task_module, "exec_script", fake_exec)
    monkeypatch.setattr(batch, "exec_script", fake_exec)  # the tests' batch
    host = SimpleNamespace(name=jobs[0].hosts[0], get_connection=lambda *a: object())
    task = SimpleNamespace(host=host, nornir=SimpleNamespace(config=None),
                           is_dry_run=lambda: False)
    result = task_module.run_nccl_tests(task, jobs)  # type: ignore[arg-type]
    assert len(seen) == 1 and " &\n" not in seen[0]  # one batch, tests one after the other
    return result.result


def _verdict(intent: Intent, facts: Facts) -> list[Any]:
    return validators.run_checks(intent, facts, {"nccl"})


@pytest.mark.parametrize("recorded,status,busbw", [(GOOD, "pass", 21.4033),
                                                   (DEGRADED, "fail", 2.82151)])
def test_recorded_run_is_judged_against_the_profile(
        monkeypatch: pytest.MonkeyPatch, star4: Intent, healthy: Facts, recorded: Path,
        status: str, busbw: float) -> None:
    jobs = [j for j in nccl_jobs(star4, healthy, _found(healthy)) if j.test == "all_gather_perf"]
    runs = _run_task(monkeypatch, jobs, _batched(recorded.read_text()))
    assert [(r.test, r.busbw_gbytes, r.error) for r in runs] == [
        ("all_gather_perf", busbw, None)]
    [result] = _verdict(star4, dataclasses.replace(healthy, nccl=tuple(runs)))
    assert result.status == status and result.actual == busbw
    assert "spark01,spark02,spark03,spark04" in result.message
    if status == "fail":
        assert result.expected == 15 and "NCCL_IB_HCA" in result.hint


def test_failed_mpirun_is_a_failure_with_the_reason(star4: Intent, healthy: Facts) -> None:
    job = NcclJob("all_reduce_perf", ("spark01", "spark02"), "mpirun ...")
    fact = nccl_fact(job, JobOutput(0, "ORTE was unable to reliably start one or more daemons.\n",
                                    1))
    assert fact.busbw_gbytes is None and fact.error and "exited 1" in fact.error
    [r] = _verdict(star4, dataclasses.replace(healthy, nccl=(fact,)))
    assert r.status == "fail" and "spark01,spark02" in r.message
    assert nccl_fact(job, JobOutput(0, "", None)).error == "no output came back"


def test_absent_nccl_tests_skips_with_the_reason(star4: Intent, healthy: Facts) -> None:
    none: dict[str, str | None] = dict.fromkeys(TOOLS)
    found = {h: none for h in healthy.sparks}
    facts = with_missing(healthy, found)
    assert nccl_jobs(star4, facts, found) == []
    results = _verdict(star4, facts)
    assert {r.status for r in results} == {"skip"}
    assert any("all_reduce_perf is not installed on spark01, spark02, spark03, spark04"
               in r.message for r in results)
    assert with_missing(facts, found) == facts  # recorded once
