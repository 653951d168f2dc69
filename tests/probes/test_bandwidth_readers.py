"""Bandwidth readers and per-cable facts from recorded tool outputs (perftest, iperf3 -J),
and the RDMA path: GID lookup from facts, skip reasons where no RDMA device exists."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.probes.bandwidth import cable_facts, rdma_gids
from fabric.probes.batch import JobOutput
from fabric.probes.measure import Measurement, combined
from fabric.probes.schedule import plan_bandwidth
from fabric.probes.tools import Reading, perftest_client, read_iperf3, read_perftest
from tests.conftest import REPO
from tests.validators.builder import healthy

FIXTURES = REPO / "tests" / "parsers" / "linux"


def _job(path: str, rc: int = 0) -> JobOutput:
    return JobOutput(0, (FIXTURES / path).read_text(), rc)


def test_perftest_average_gbps() -> None:
    reading = read_perftest(_job("ib_write_bw/dgx_spark_trimmed_mtu4096.raw"))
    assert reading == Reading(109.17, None)


def test_perftest_errors_are_readings() -> None:
    reading = read_perftest(_job("ib_write_bw/error_completion_retry_exceeded.raw", 1))
    assert reading.gbps is None and reading.error is not None
    assert reading.error.startswith("ib_write_bw completion")
    assert read_perftest(JobOutput(0, "", None)).error == "no output came back"


def test_iperf3_refused_exits_zero_but_fails() -> None:
    reading = read_iperf3(_job("iperf3/client_connrefused.raw", 0))
    assert reading.gbps is None and reading.error is not None and "iperf3:" in reading.error


def test_iperf3_client_gbps() -> None:
    reading = read_iperf3(_job("iperf3/client_p2_duplicate_keys.raw"))
    assert reading.error is None and reading.gbps is not None and reading.gbps > 0


def test_both_twins_sum_or_errors() -> None:
    assert combined({0: Reading(100.0, None), 1: Reading(95.5, None)}) == Reading(195.5, None)
    assert combined({0: Reading(100.0, None), 1: Reading(None, "x")}).error == "twin B: x"


def test_perftest_client_command() -> None:
    cmd = perftest_client("rocep1s0f0", 3, 10, "10.210.0.2", 5301)
    assert "-d rocep1s0f0 -x 3" in cmd and "--report_gbits -D 10" in cmd
    assert cmd.endswith("-p 5301 10.210.0.2")


def _without_rdma(facts: Facts) -> Facts:
    sparks = {n: dataclasses.replace(s, rdma={}, gids=()) for n, s in facts.sparks.items()}
    return dataclasses.replace(facts, sparks=sparks)


def test_rdma_gids_found_or_skipped_with_reason(intents: dict[str, Intent]) -> None:
    intent = intents["star4"]
    schedule = plan_bandwidth(intent, 10.0)
    facts = healthy(intent)
    gids, reasons = rdma_gids(schedule, facts)
    assert reasons == [] and set(gids) == {t.index for t in schedule.tests}
    expected = {g.index for s in facts.sparks.values() for g in s.gids
                if g.gid_type == "RoCE v2" and g.ipv4}
    assert {i for per in gids.values() for pair in per.values() for i in pair} <= expected
    gids, reasons = rdma_gids(schedule, _without_rdma(facts))
    assert gids == {} and reasons and all("no RDMA devices" in r for r in reasons)


def test_cable_facts_take_the_best_test(intents: dict[str, Intent]) -> None:
    schedule = plan_bandwidth(intents["star4"], 3.0)
    slow = intents["star4"].links[1].id  # spark02's cable: its two tests are slow
    ms = [Measurement(t.index, t.round, t.client, t.server, t.links, "iperf3", 0,
                      0.5 if slow in t.links else 2.0, None, 3.0) for t in schedule.tests]
    facts = {f.link_id: f for f in cable_facts(schedule, ms)}
    assert len(facts) == 4
    assert facts[slow].gbps == 0.5
    assert all(f.gbps == 2.0 for lk, f in facts.items() if lk != slow)


def test_cable_facts_report_every_failed_test(intents: dict[str, Intent]) -> None:
    schedule = plan_bandwidth(intents["ring4"], 3.0)
    t = schedule.tests[0]
    facts = cable_facts(schedule, [Measurement(t.index, 0, t.client, t.server, t.links,
                                               "iperf3", 1, None, "iperf3: refused", 3.0)])
    assert facts[0].link_id == t.links[0] and facts[0].error == "iperf3: refused"
