"""Splitting a batched ping run and turning each output into a PingFact (recorded outputs)."""

from __future__ import annotations

from fabric.probes.ping import PingProbe, ping_fact
from fabric.remote.batch import batch_script, split_batch
from tests.probes.conftest import recorded


def _probe(payload: int = 8972, dst: str = "198.18.9.2") -> PingProbe:
    return PingProbe("spark01", "va", "spark02", "vb", dst, payload, "l1")


def test_batch_script_runs_jobs_in_parallel_and_marks_them() -> None:
    script = batch_script(["echo a", "echo b"])
    assert script.count(" & p") == 2 and "\nwait $p1; " in script
    assert "@@fabric-job begin 1" in script


def test_split_mixed_batch() -> None:
    jobs = split_batch(recorded("ping_batch_mixed.txt"), 5)
    assert [j.exit_code for j in jobs] == [1, 0, 2, 1, 1]
    assert jobs[1].text.startswith("PING 198.18.9.2")


def test_split_reports_missing_jobs() -> None:
    jobs = split_batch(recorded("ping_batch_jumbo_ok.txt"), 2)
    assert jobs[0].exit_code == 0 and jobs[1].exit_code is None


def test_jumbo_ok() -> None:
    job = split_batch(recorded("ping_batch_jumbo_ok.txt"), 1)[0]
    fact = ping_fact(_probe(), job.text, job.exit_code)
    assert (fact.sent, fact.received, fact.error, fact.size) == (3, 3, None, 8972)
    assert fact.link_id == "l1"


def test_local_mtu_error() -> None:
    job = split_batch(recorded("ping_batch_local_mtu.txt"), 1)[0]
    fact = ping_fact(_probe(), job.text, job.exit_code)
    assert fact.received == 0
    assert fact.error == "local error: message too long, mtu=1500"


def test_mixed_outcomes() -> None:
    jobs = split_batch(recorded("ping_batch_mixed.txt"), 5)
    probes = [_probe(), _probe(56), _probe(56), _probe(56, "198.18.9.77"), _probe(56, "10.9.9.9")]
    facts = [ping_fact(p, j.text, j.exit_code) for p, j in zip(probes, jobs, strict=True)]
    lost_jumbo, small, no_dev, silent, _ = facts
    assert (lost_jumbo.sent, lost_jumbo.received) == (3, 0)
    assert lost_jumbo.error == "sendmsg: No buffer space available"
    assert (small.received, small.error) == (3, None)
    assert no_dev.sent == 0 and no_dev.error == "SO_BINDTODEVICE nosuch: No such device"
    assert (silent.sent, silent.received, silent.error) == (3, 0, None)


def test_unparseable_output_becomes_an_error_not_an_exception() -> None:
    fact = ping_fact(_probe(), "PING x (x) 8972(9000) bytes of data.\ngarbage here\n", 1)
    assert fact.received == 0 and fact.error is not None and "garbage" in fact.error


def test_no_output() -> None:
    fact = ping_fact(_probe(), "", None)
    assert fact.error == "no output came back"
