"""The one runner: each host's result, or one line saying why it failed or did not run."""

from __future__ import annotations

from typing import Any

from nornir.core.task import Result, Task

from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import NOT_RUN, run, run_described
from fabric.target import Target


def _task(task: Task) -> Result:
    host = task.host.name
    if host == "spark02":
        raise ConnectionRefusedError("refused")
    if host == "spark03":  # a task that reports its problems as its (failed) result
        return Result(host=task.host, result=["mtu 1500"], failed=True)
    return Result(host=task.host, result=f"{host} fine")


def test_results_and_reasons_per_host(target: Target) -> None:
    nr = make_nornir(target, ["spark01", "spark02", "spark03"])
    hosts = ["spark01", "spark02", "spark03", "spark04"]
    ok, errors = run(nr, _task, hosts=hosts, addressed=True)
    assert ok == {"spark01": "spark01 fine", "spark03": ["mtu 1500"]}
    assert errors == {"spark02": "ssh 127.0.0.1:1: connection refused (is sshd running?)",
                      "spark04": NOT_RUN}
    _, plain = run(nr, _task, hosts=["spark02"], on_failed=True,
                   scrub=lambda text: text.replace("refused", "***"))
    assert plain == {"spark02": "ssh: connection *** (is sshd running?)"}


def test_failures_described_by_the_caller(target: Target) -> None:
    nr = make_nornir(target, ["spark01", "spark02"])

    def describe(exc: BaseException, where: str) -> tuple[str, Any]:
        return where, type(exc)

    ok, errors = run_described(nr, _task, describe, not_run=("-", None))
    assert list(ok) == ["spark01"]
    assert errors == {"spark02": ("ssh", ConnectionRefusedError)}
