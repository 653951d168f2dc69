"""Checks on recorded facts: the lab's real `fabric facts` output, real perftest and
show_gids outputs (parsed with fabric.parsers) turned into facts."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from fabric.facts import BandwidthFact, Facts, GidFact, facts_from_json
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.parsers import parse
from fabric.parsers.records import GidEntry, PerftestBandwidth, PerftestError, PerftestHeader
from tests.validators import builder
from tests.validators.helpers import bad, failures
from validators import run_checks

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "tests" / "fixtures" / "validators" / "real"  # copies of real tool outputs


def test_unconfigured_lab_facts(star4: Intent) -> None:
    """`fabric facts --lab` of an unconfigured star4 lab: MTU 1500, no addresses, lanes on
    auto-negotiation at 100G, lanes outside the bridge: each named, nothing crashes."""
    intent = load_intent(REPO / "tests" / "fixtures" / "validators" / "star4-veth.yaml")
    facts = facts_from_json((REPO / "tests/fixtures/facts/lab_star4.json").read_text())
    results = run_checks(intent, facts)
    assert not [r for r in results if r.status == "error"]
    failing = Counter(r.check for r in results if r.status == "fail")
    assert failing == {"addr.plan": 8, "mtu.interface": 8, "link.switch_lane": 4,
                       "mtu.switch": 4, "switch.bridge": 4,
                       "host.ipc": 1}  # spark01's recorded logind.conf: RemoveIPC unset
    lane = next(r for r in results if r.check == "link.switch_lane" and r.status == "fail")
    assert "auto-negotiation is on" in lane.message
    for r in results:
        if r.status == "skip":
            assert r.message, r
    assert {r.status for r in results if r.check.startswith(("link.twin_up", "cabling"))} == {
        "pass"}


def _gids(path: Path, devices: dict[str, tuple[str, str, str]]) -> tuple[GidFact, ...]:
    """show_gids records re-keyed onto a Spark: real device -> (rdma, netdev, planned IPv4)."""
    out = []
    for rec in parse("show_gids", path.read_text()):
        assert isinstance(rec, GidEntry)
        if rec.device not in devices:
            continue
        rdma, netdev, ip = devices[rec.device]
        out.append(GidFact(rdma, rec.port, rec.index, rec.gid, f"RoCE {rec.roce_version}",
                           ip if rec.ipv4 else None, netdev))
    return tuple(out)


def _with_real_gids(intent: Intent, facts: Facts, host: str, path: Path,
                    devices: list[str]) -> Facts:
    plans = intent.interfaces(host)
    mapping = {dev: (p.rdma, p.netdev, str(p.address.ip))
               for dev, p in zip(devices, plans, strict=False)}
    return builder.replace_spark(facts, host, gids=_gids(path, mapping))


def test_real_show_gids_index_3_passes(star4: Intent, star_facts: Facts) -> None:
    facts = _with_real_gids(star4, star_facts, "spark01", REAL / "show_gids_spaces_4nics.txt",
                            ["mlx5_0", "mlx5_1"])
    failures(star4, facts)
    index = next(r for r in run_checks(star4, facts, {"gid.index"}))
    assert (index.status, index.actual) == ("pass", 3)


def test_real_show_gids_index_7_is_the_odd_one(star4: Intent, star_facts: Facts) -> None:
    """The pod's table (link-local GIDs first at 4/5) puts the IPv4 RoCE v2 GID at 7."""
    facts = _with_real_gids(star4, star_facts, "spark03", REAL / "show_gids_tabs_raw.txt",
                            ["mlx5_0", "mlx5_1"])
    link = star4.links_of("spark03")[0].id
    rs = failures(star4, facts, ("gid.index", "spark03", link))
    assert len(rs) == 2 and {(r.expected, r.actual) for r in rs} == {(3, 7)}
    assert "NCCL_IB_GID_INDEX" in rs[0].message


def _perftest_gbps(path: Path) -> tuple[float, int | None]:
    records = parse("ib_write_bw", path.read_text())
    rows = [r.bw_average_gbps for r in records if isinstance(r, PerftestBandwidth)]
    header = next(r for r in records if isinstance(r, PerftestHeader))
    return sum(rows) / len(rows), header.gid_index


def test_real_perftest_numbers_pass_the_cx7_profile(ring4: Intent, ring_facts: Facts) -> None:
    lane1, gid1 = _perftest_gbps(REAL / "ib_write_bw_client_dgx_spark_lane1.txt")
    lane2, _ = _perftest_gbps(REAL / "ib_write_bw_client_dgx_spark_lane2.txt")
    assert 90 < lane1 < 100 and 90 < lane2 < 100 and gid1 == 3
    bw = tuple(dataclasses.replace(b, gbps=(lane1, lane2)[b.twin])
               if b.tool == "ib_write_bw" and b.twin is not None else b
               for b in ring_facts.bandwidth)
    facts = dataclasses.replace(ring_facts, bandwidth=bw)
    failures(ring4, facts)
    index = next(r for r in run_checks(ring4, facts, {"gid.index"}))
    assert index.actual == gid1  # the index perftest used is the one validated


def test_real_perftest_error_fails_the_link(ring4: Intent, ring_facts: Facts) -> None:
    raw = ("Failed to modify QP 122273 to RTR\n Unable to Connect the HCA's through the link\n")
    [err] = [r for r in parse("ib_write_bw", raw) if isinstance(r, PerftestError)]
    link = ring4.links[1].id
    bw = tuple(BandwidthFact(b.link_id, b.tool, b.twin, b.src_host, b.dst_host, None,
                             error="; ".join(err.messages))
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", 0) else b
               for b in ring_facts.bandwidth)
    rs = bad(run_checks(ring4, dataclasses.replace(ring_facts, bandwidth=bw)))
    assert [(r.check, r.link) for r in rs] == [("bw.link", link)]
    assert "RTR" in rs[0].message
