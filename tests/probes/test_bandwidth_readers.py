"""Bandwidth readers and per-cable, per-direction facts from recorded tool outputs
(perftest, iperf3 -J, iperf3 --bidir -J), and the RDMA path: GID lookup from facts, skip
reasons where no RDMA device exists."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.probes import measure
from fabric.probes.bandwidth import cable_facts, measurements_dicts, rdma_gids
from fabric.probes.measure import (
    Measurement,
    combined,
    iperf3_bidir_client,
    measurement,
    read_iperf3_bidir,
)
from fabric.probes.run_bandwidth_pair import _perftest
from fabric.probes.schedule import BandwidthTest, Schedule, schedule_bandwidth
from fabric.probes.tools import Reading, perftest_client, read_iperf3, read_perftest
from fabric.remote import batch
from fabric.remote.batch import MARK, JobOutput
from tests.conftest import REPO
from tests.probes.conftest import OUTPUTS
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
    schedule = schedule_bandwidth(intent, 10.0)
    facts = healthy(intent)
    gids, reasons = rdma_gids(schedule, facts)
    assert reasons == [] and set(gids) == {t.index for t in schedule.tests}
    expected = {g.index for s in facts.sparks.values() for g in s.gids
                if g.gid_type == "RoCE v2" and g.ipv4}
    assert {i for per in gids.values() for pair in per.values() for i in pair} <= expected
    gids, reasons = rdma_gids(schedule, _without_rdma(facts))
    assert gids == {} and reasons and all("no RDMA devices" in r for r in reasons)


def _bidir(name: str) -> JobOutput:
    return JobOutput(0, (OUTPUTS / name).read_text(), 0)


def _stream_gbps(name: str, client_sends: bool) -> float:
    """Receiver-side sum over the streams whose `sender` flag says who sent (cross-check)."""
    data = json.loads((OUTPUTS / name).read_text())
    bps: float = sum(s["receiver"]["bits_per_second"] for s in data["end"]["streams"]
                     if s["receiver"]["sender"] is client_sends)
    return round(bps / 1e9, 3)


def test_iperf3_bidir_reads_each_way() -> None:
    """Recorded on Debian 12 (iperf 3.12, veth): 1G offered each way, the way back shaped to
    300 Mbit/s by a tbf on the server's egress."""
    name = "iperf3_bidir_back_shaped_300mbit.json"
    there, back = read_iperf3_bidir(_bidir(name))
    assert there == Reading(0.998, None) and back == Reading(0.286, None)
    assert (there.gbps, back.gbps) == (_stream_gbps(name, True), _stream_gbps(name, False))


def test_iperf3_bidir_parallel_streams_slow_way_there() -> None:
    """-P 2, the client's egress shaped to 400 Mbit/s: the slow way is client -> server."""
    name = "iperf3_bidir_p2_there_shaped_400mbit.json"
    there, back = read_iperf3_bidir(_bidir(name))
    assert there.gbps is not None and back.gbps is not None and there.gbps < 0.4 < back.gbps
    assert (there.gbps, back.gbps) == (_stream_gbps(name, True), _stream_gbps(name, False))


def test_iperf3_bidir_failures_fail_both_ways() -> None:
    there, back = read_iperf3_bidir(_job("iperf3/client_connrefused.raw", 0))
    assert there == back and there.gbps is None and "iperf3:" in (there.error or "")
    assert read_iperf3_bidir(JobOutput(0, "", None))[1].error == "no output came back"
    there, back = read_iperf3_bidir(_job("iperf3/client_p2_duplicate_keys.raw"))
    assert there.gbps and back.gbps is None and "--bidir" in (back.error or "")
    assert iperf3_bidir_client("iperf3 -c 198.18.0.2 -J").endswith(" -J --bidir")


def _one_way_slow(schedule: Schedule, slow: str, tool: str = "iperf3",
                  twin: int | None = 0) -> list[Measurement]:
    """Every test direction measured; those through the crossing labelled `slow` at 0.25."""
    return [measurement(t, tool, twin, Reading(0.25 if any(c.label == slow
                                                            for c in t.crossings(rev))
                                               else 1.0, None), 3.0, rev)
            for t in schedule.tests for rev in (False, True)]


def test_cable_facts_per_direction_take_the_best_test(intents: dict[str, Intent]) -> None:
    """Egress toward spark01 slow: its fact is slow (both tests that way were), every other
    cable direction has a healthy test and is fast, its own way back included."""
    schedule = schedule_bandwidth(intents["star4"], 3.0)
    slow = "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"
    facts = cable_facts(schedule, _one_way_slow(schedule, slow))
    assert len(facts) == 8  # 4 cables x 2 directions
    link1 = intents["star4"].links[0].id
    slow_facts = [f for f in facts if f.gbps == 0.25]
    assert [(f.link_id, f.dst_host) for f in slow_facts] == [(link1, "spark01")]
    assert all(f.gbps == 1.0 for f in facts if f not in slow_facts)
    ways = {(f.link_id, f.src_host == "spark01") for f in facts if f.link_id == link1}
    assert ways == {(link1, True), (link1, False)}


def test_cable_facts_report_every_failed_test(intents: dict[str, Intent]) -> None:
    schedule = schedule_bandwidth(intents["ring4"], 3.0)
    t = schedule.tests[0]
    facts = cable_facts(schedule, [measurement(t, "iperf3", 1, Reading(None, "iperf3: refused"),
                                               3.0, rev) for rev in (False, True)])
    assert [(f.link_id, f.src_host, f.dst_host, f.error) for f in facts] == [
        (t.links[0], t.client, t.server, "iperf3: refused"),
        (t.links[0], t.server, t.client, "iperf3: refused")]
    star = schedule_bandwidth(intents["star4"], 3.0)
    failed = [measurement(s, "iperf3", 0, Reading(None, "timeout"), 3.0, rev)
              for s in star.tests for rev in (False, True)]
    every = [f.error for f in cable_facts(star, failed)]
    assert all(e and e.startswith("every test") and e.count("timeout") == 2 for e in every)


def test_measurement_dicts_name_the_way(intents: dict[str, Intent]) -> None:
    test: BandwidthTest = schedule_bandwidth(intents["star4"], 3.0).tests[0]
    [d] = measurements_dicts([measurement(test, "iperf3", 0, Reading(1.0, None), 3.0, True)])
    assert (d["src"], d["dst"], d["reverse"]) == ("spark02", "spark01", True)
    assert [c["where"] for c in d["crossings"]] == ["crs804:qsfp56-dd-2-1 ingress",
                                                   "crs804:qsfp56-dd-1-1 egress"]
    json.dumps(d)


def test_rdma_runs_one_ib_write_bw_each_way_at_once(intents: dict[str, Intent],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`ib_write_bw -b` reports only the sum of both ways, so each way is its own run: servers
    on both Sparks, then both Sparks' clients at once, each with its own GID index; readings
    from the real DGX Spark output."""
    test = schedule_bandwidth(intents["star4"], 10.0).tests[0]
    gids = {0: (3, 5), 1: (4, 6)}  # twin -> (client's GID index, server's GID index)
    spark = (REPO / "tests/parsers/linux/ib_write_bw/dgx_spark_trimmed_mtu4096.raw").read_text()
    calls: list[tuple[str, str]] = []

    def fake_exec(conn: str, script: str, timeout: float, login: bool = False) -> tuple[int, str]:
        calls.append((conn, script))
        keys = re.findall(r'echo "@@port (\S+) \$s\d+"', script)
        if keys:  # a server start: every server listens
            return 0, "".join(f"@@port {k} {5301 + i}\n" for i, k in enumerate(keys))
        jobs = script.count("ib_write_bw")
        return 0, "".join(f"{MARK} begin {i}\n{spark}{MARK} end {i} exit=0\n"
                          for i in range(jobs))

    monkeypatch.setattr(measure, "exec_script", fake_exec)
    monkeypatch.setattr(batch, "exec_script", fake_exec)  # the clients' batch
    there, back = measure.run_duplex_phase(
        "client", "server", test, _perftest(gids, 10.0, False), _perftest(gids, 10.0, True),
        test.legs, 10.0, 5301)
    assert there == back == {0: Reading(109.17, None), 1: Reading(109.17, None)}
    scripts = {(conn, "@@port" in s): s for conn, s in calls}
    assert len(calls) == 4 and len(scripts) == 4
    for leg in test.legs:
        gc, gs = gids[leg.twin]
        assert f"ib_write_bw -d {leg.server_rdma} -x {gs} " in scripts[("server", True)]
        assert f"ib_write_bw -d {leg.client_rdma} -x {gc} " in scripts[("client", True)]
        assert re.search(rf"-d {leg.client_rdma} -x {gc} .* {leg.server_addr}\b",
                         scripts[("client", False)])
        assert re.search(rf"-d {leg.server_rdma} -x {gs} .* {leg.client_addr}\b",
                         scripts[("server", False)])


def test_rdma_runs_in_the_lossless_class_on_a_lossless_topology() -> None:
    """perftest without --tclass runs at DSCP 0, priority 0: the lossy queue. On a lossless
    topology every server and client carries the RoCE class (DSCP 26, ToS 106), so PFC and
    ECN carry the test traffic; on a lossy one neither does."""
    from fabric.intent.build import load_intent
    from fabric.probes.run import rdma_tclass
    from tests.probes.conftest import INVENTORY

    lossless = load_intent("star4-lossless", INVENTORY)
    assert rdma_tclass(lossless) == 106
    assert rdma_tclass(load_intent("star4", INVENTORY)) is None
    test = schedule_bandwidth(lossless, 10.0).tests[0]
    leg = test.legs[0]
    for reverse in (False, True):
        tool = _perftest({leg.twin: (3, 5)}, 10.0, reverse, rdma_tclass(lossless))
        assert " --tclass 106 " in tool.server(leg) and " --tclass 106 " in tool.client(leg, 1)
    plain = _perftest({leg.twin: (3, 5)}, 10.0, False, None)
    assert "--tclass" not in plain.server(leg) + plain.client(leg, 1)
