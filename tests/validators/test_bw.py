"""bw: profile floors and stragglers against the median of peer links and directions; a
cable slow one way fails that cable and direction only."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.intent.wire import Crossing
from fabric.probes.bandwidth import cable_facts, measurements_dicts
from fabric.probes.measure import measurement
from fabric.probes.schedule import BandwidthTest, schedule_bandwidth
from fabric.probes.tools import Reading
from fabric.report.model import CheckResult
from tests.validators import builder
from tests.validators.helpers import failures, link_id
from validators import run_checks
from validators.bw import check_link

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validators"


def test_straggler_above_the_floor_still_fails(star4: Intent, star_facts: Facts) -> None:
    """spark03's TCP at 60 Gb/s clears the 50 Gb/s floor but is < 70% of its peers' 98."""
    link = link_id(star4, "spark03")
    bw = tuple(dataclasses.replace(b, gbps=60.0) if (b.link_id, b.tool) == (link, "iperf3")
               else b for b in star_facts.bandwidth)
    facts = dataclasses.replace(star_facts, bandwidth=bw)
    [r] = failures(star4, facts, ("bw.link", None, link))
    assert "straggler" in r.message and "floor" not in r.message and r.status == "fail"
    assert r.expected["peer_median_gbps"] == 98.0


def test_straggler_in_the_lab_profile_without_floors() -> None:
    """veth has no floors at all: only the peers' median can catch a slow link."""
    it = builder.intent(str(FIXTURES / "ring4-veth.yaml"))
    facts = builder.healthy(it)
    assert failures(it, facts) == []
    assert not any(b.tool == "ib_write_bw" for b in facts.bandwidth)
    link = it.links[3].id
    bw = tuple(dataclasses.replace(b, gbps=3.0) if b.link_id == link else b
               for b in facts.bandwidth)
    [r] = failures(it, dataclasses.replace(facts, bandwidth=bw), ("bw.link", None, link))
    assert r.expected["min_gbps"] is None and "straggler" in r.message


def test_tcp_below_floor_alone_is_a_warning(ring4: Intent, ring_facts: Facts) -> None:
    """TCP is a secondary signal on RDMA hardware: 45 Gb/s (peers at ~49) only warns."""
    bw = tuple(dataclasses.replace(b, gbps=45.0 + i % 4) if b.tool == "iperf3" else b
               for i, b in enumerate(ring_facts.bandwidth))
    results = check_link(ring4, dataclasses.replace(ring_facts, bandwidth=bw))
    assert {r.status for r in results if r.expected and r.actual and r.actual < 50} == {"warn"}


def test_rdma_twin_below_floor(ring4: Intent, ring_facts: Facts) -> None:
    link = ring4.links[2].id
    bw = tuple(dataclasses.replace(b, gbps=70.0)
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", 1) else b
               for b in ring_facts.bandwidth)
    [r] = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert "80 Gb/s floor" in r.message and "twin B" in r.message


def test_degraded_link_after_recabling(ring4: Intent, ring_facts: Facts) -> None:
    """The post-recable 8-25 Gb/s state: every measurement on one link is low."""
    link = ring4.links[1].id
    bw = tuple(dataclasses.replace(b, gbps=12.0) if b.link_id == link else b
               for b in ring_facts.bandwidth)
    rs = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert len(rs) == 4  # twin A, twin B, both twins, TCP
    assert any("reboot" in r.hint for r in rs)


def test_failed_measurement(ring4: Intent, ring_facts: Facts) -> None:
    link = ring4.links[0].id
    bw = tuple(dataclasses.replace(b, gbps=None, error="ibv_modify_qp failed (110)")
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", 0) else b
               for b in ring_facts.bandwidth)
    [r] = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert "110" in r.message


def test_no_probes_is_a_skip(ring4: Intent, ring_facts: Facts) -> None:
    [r] = check_link(ring4, dataclasses.replace(ring_facts, bandwidth=()))
    assert r.status == "skip" and "no bandwidth" in r.message


# --- both ways: facts made the way the probes make them, from per-direction measurements ----

#: Healthy Gb/s per (tool, twin): a veth lab offering 1G per twin (the lab measured these
#: at 1G until it moved to 500M; the judge is relative); CX-7 over 200G DAC.
VETH = {("iperf3", 0): 1.0, ("iperf3", 1): 1.0}
CX7 = {("iperf3", 0): 60.0, ("iperf3", 1): 60.0, ("ib_write_bw", 0): 96.0,
       ("ib_write_bw", 1): 96.0, ("ib_write_bw", None): 190.0}

Slow = Callable[[Crossing, str, int | None], float | None]  # factor for a crossing, or None


def probed(intent: Intent, slow: Slow, hosts: list[str] | None = None,
            acks: float = 1.0) -> Facts:
    """Every test of the schedule measured both ways; a way through a crossing that `slow`
    names runs at that fraction of healthy (both twins at once: the twins' mean fraction),
    and at most at `acks` of healthy when its way back is slowed (its acknowledgements queue
    there while both ways run)."""
    schedule = schedule_bandwidth(intent, 3.0, hosts=hosts)
    healthy = CX7 if intent.profile.rdma else VETH

    def fraction(crossings: tuple[Crossing, ...], tool: str, twin: int) -> float:
        return min((f for c in crossings if (f := slow(c, tool, twin)) is not None),
                   default=1.0)

    def way(test: BandwidthTest, rev: bool, tool: str, twin: int) -> float:
        back = acks if fraction(test.crossings(not rev), tool, twin) < 1.0 else 1.0
        return min(fraction(test.crossings(rev), tool, twin), back)

    ms = []
    for test in schedule.tests:
        for rev in (False, True):
            for (tool, twin), gbps in healthy.items():
                twins = (0, 1) if twin is None else (twin,)
                got = gbps * sum(way(test, rev, tool, t) for t in twins) / len(twins)
                ms.append(measurement(test, tool, twin, Reading(round(got, 3), None), 3.0,
                                      rev))
    facts = builder.healthy(intent)
    return dataclasses.replace(facts, bandwidth=tuple(cable_facts(schedule, ms)),
                               schedule={"measurements": measurements_dicts(ms)})


def slow_at(*labels: str, factor: float = 0.25, tool: str | None = None,
           twin: int | str | None = "any") -> Slow:
    def slow(c: Crossing, t: str, w: int | None) -> float | None:
        hit = c.label in labels and tool in (None, t) and twin in ("any", w)
        return factor if hit else None
    return slow


def _healthy(c: Crossing, t: str, w: int | None) -> float | None:
    return None


@pytest.fixture(scope="module")
def star4_veth() -> Intent:
    return builder.intent(str(FIXTURES / "star4-veth.yaml"))


@pytest.fixture(scope="module")
def ring4_veth() -> Intent:
    return builder.intent(str(FIXTURES / "ring4-veth.yaml"))


def _bw(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.check == "bw.link"]


@pytest.mark.parametrize("name", ["star4_veth", "ring4_veth", "star4", "ring4"])
def test_both_ways_healthy_passes(name: str, request: pytest.FixtureRequest) -> None:
    intent: Intent = request.getfixturevalue(name)
    facts = probed(intent, _healthy)
    assert failures(intent, facts) == []
    judged = [r for r in _bw(run_checks(intent, facts)) if r.status == "pass"]
    per_twin_tools = 2 if not intent.profile.rdma else 5
    assert len(judged) == 2 * len(intent.links) * per_twin_tools  # every cable, both ways


EGRESS_1 = "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"


def test_one_way_slow_egress_fails_that_lane_direction_only(star4_veth: Intent) -> None:
    """The lab's tbf on qsfp56-dd-1-1 toward spark01: spark04->spark01 and spark02->spark01
    are slow, everything else (spark01's own way out included) is not."""
    facts = probed(star4_veth, slow_at(EGRESS_1))
    link = link_id(star4_veth, "spark01")
    rs = failures(star4_veth, facts, ("bw.link", None, link))
    assert len(rs) == 2 and {r.status for r in rs} == {"fail"}  # TCP twin A and twin B
    for r in rs:
        assert EGRESS_1 in r.message and "straggler" in r.message, r.message
        assert "spark04→spark01 0.25 Gb/s" in r.message
        assert "spark02→spark01 0.25 Gb/s" in r.message
        assert "toward spark01 only" in r.hint and "qsfp56-dd-1-1" in r.hint
    back = [r for r in _bw(run_checks(star4_veth, facts))
            if r.link == link and "ingress" in r.message]
    assert len(back) == 2 and {r.status for r in back} == {"pass"}


def test_acks_behind_a_slow_way_back_warn_not_fail(star4_veth: Intent) -> None:
    """Measured in the lab: with the tbf toward spark01, spark01's own sending (its TCP acks
    queue behind the slow way in) fell to 0.41 Gb/s per twin while the slow way gave 0.25.
    The slow way fails; spark01's way out only warns, naming the way back as the cause."""
    facts = probed(star4_veth, slow_at(EGRESS_1), acks=0.41)
    link = link_id(star4_veth, "spark01")
    rs = failures(star4_veth, facts, ("bw.link", None, link))
    fails = [r for r in rs if r.status == "fail"]
    warns = [r for r in rs if r.status == "warn"]
    assert len(fails) == 2 and all(EGRESS_1 in r.message for r in fails)
    assert len(warns) == 2
    for r in warns:
        assert "spark01→crs804 (crs804:qsfp56-dd-1-1 ingress): 0.41 Gb/s" in r.message
        assert f"its way back {EGRESS_1} is slower (0.25 Gb/s)" in r.message
        assert "acknowledgements" in r.message and EGRESS_1 in r.hint


def test_symmetric_degrade_with_acks_fails_both_ways(star4_veth: Intent) -> None:
    """Measured in the lab (`fabric lab fault degrade`): 0.50 Gb/s one way, 0.505 the other.
    Neither way back is clearly slower, so both ways fail."""
    facts = probed(star4_veth, lambda c, t, w: 0.5 if c.link.startswith("spark02") and
                    c.src == "spark02" else 0.505 if c.link.startswith("spark02") else None,
                    acks=0.6)
    rs = failures(star4_veth, facts, ("bw.link", None, link_id(star4_veth, "spark02")))
    assert len(rs) == 4 and {r.status for r in rs} == {"fail"}
    assert not any("acknowledgements" in r.message for r in rs)


def test_one_way_slow_ingress_fails_the_senders_lane(star4_veth: Intent) -> None:
    ingress = "spark04→crs804 (crs804:qsfp56-dd-4-1 ingress)"
    facts = probed(star4_veth, slow_at(ingress))
    rs = failures(star4_veth, facts, ("bw.link", None, link_id(star4_veth, "spark04")))
    assert all(ingress in r.message and "from spark04 only" in r.hint for r in rs)
    assert all("spark04→spark01" in r.message and "spark04→spark03" in r.message for r in rs)


def test_symmetric_degrade_fails_both_directions_of_that_cable(star4_veth: Intent) -> None:
    """The lab's `fault degrade` (both ends shaped): both directions of spark02's cable fail,
    its partners' cables (which share every slow test) do not."""
    facts = probed(star4_veth, slow_at("spark02→crs804 (crs804:qsfp56-dd-2-1 ingress)",
                                       "crs804→spark02 (crs804:qsfp56-dd-2-1 egress)"))
    rs = failures(star4_veth, facts, ("bw.link", None, link_id(star4_veth, "spark02")))
    assert len(rs) == 4  # 2 directions x TCP twin A, B
    assert {"ingress" in r.message for r in rs} == {True, False}


def test_ring_one_way_slow_fails_that_direction(ring4_veth: Intent) -> None:
    link = ring4_veth.links[2]
    way = f"spark03→spark04 (spark03:{link.end_of('spark03').port} tx, spark04:" \
          f"{link.end_of('spark04').port} rx)"
    facts = probed(ring4_veth, slow_at(way))
    rs = failures(ring4_veth, facts, ("bw.link", None, link.id))
    assert len(rs) == 2 and all(way in r.message for r in rs)
    assert all("the only test that way: spark03→spark04 0.25 Gb/s" in r.message for r in rs)


def test_rdma_one_twin_slow_one_way(star4: Intent) -> None:
    """Hardware: RDMA twin B toward spark03 at 40 Gb/s fails twin B and both twins that way;
    TCP and twin A, and every other direction, pass."""
    egress = "crs804→spark03 (crs804:qsfp56-dd-3-1 egress)"
    facts = probed(star4, slow_at(egress, factor=40 / 96, tool="ib_write_bw", twin=1))
    rs = failures(star4, facts, ("bw.link", None, link_id(star4, "spark03")))
    assert sorted(r.message.split(" on ")[0] for r in rs) == ["RDMA write twin B",
                                                              "RDMA write, both twins"]
    floors = {"RDMA write twin B": "below the 80 Gb/s floor",
              "RDMA write, both twins": "below the 150 Gb/s floor"}
    for r in rs:
        assert egress in r.message and floors[r.message.split(" on ")[0]] in r.message


def test_two_spark_star_names_both_suspects(star4_veth: Intent) -> None:
    """Only spark01 and spark02 (`--hosts`): one test, so a slow way blames the sender's
    ingress and the receiver's egress, and says that either may be the slow one."""
    facts = probed(star4_veth, slow_at("crs804→spark02 (crs804:qsfp56-dd-2-1 egress)"),
                    hosts=["spark01", "spark02"])
    rs = [r for r in _bw(run_checks(star4_veth, facts)) if r.status == "fail"]
    assert {r.link for r in rs} == {link_id(star4_veth, h) for h in ("spark01", "spark02")}
    assert all("the only test that way: spark01→spark02" in r.message
               and "which may be the slow one" in r.message for r in rs)


def test_a_direction_that_never_completed_fails_by_name(star4_veth: Intent) -> None:
    facts = probed(star4_veth, _healthy)
    link = link_id(star4_veth, "spark03")
    bw = tuple(dataclasses.replace(b, gbps=None, error="iperf3: unable to connect")
               if b.link_id == link and b.dst_host == "spark03" else b for b in facts.bandwidth)
    rs = failures(star4_veth, dataclasses.replace(facts, bandwidth=bw),
                  ("bw.link", None, link))
    assert len(rs) == 2 and all(
        "crs804→spark03 (crs804:qsfp56-dd-3-1 egress) did not complete: iperf3: unable" in r.message
        and r.hint.startswith("failing toward spark03 only") for r in rs)



def test_a_test_that_did_not_complete_is_never_hidden_by_one_that_did(
        star4: Intent, star_facts: Facts) -> None:
    """Two tests cross a cable direction; one could not connect (e.g. a lane still training):
    the direction is judged from the other, and the broken one is a warning, not silence."""
    first = star_facts.bandwidth[0]
    broken = dataclasses.replace(first, gbps=None, error="unable to connect to server")
    facts = dataclasses.replace(star_facts, bandwidth=(*star_facts.bandwidth, broken))
    warns = [r for r in run_checks(star4, facts, {"bw.link"})
             if r.status == "warn" and "did not complete" in r.message]
    assert warns and all(w.link == first.link_id for w in warns)
    assert "unable to connect to server" in warns[0].message
    clean = run_checks(star4, star_facts, {"bw.link"})
    assert not [r for r in clean if "did not complete" in r.message]


def test_the_tests_that_way_are_found_by_their_crossings_in_their_order() -> None:
    """`_Tests` indexes the schedule's rows once: each row under every way it crossed (once
    even where it lists a way twice), in the rows' order; a row whose crossing is not plain
    data matches nothing."""
    from validators.bw import _Tests

    way = Crossing("L1", "spark01", "crs804", "crs804:qsfp56-dd-1-1 ingress")
    cross = {"link": "L1", "src": "spark01", "dst": "crs804", "where": way.where}
    other = {"link": "L2", "src": "crs804", "dst": "spark02", "where": "crs804:2 egress"}
    rows = [
        {"tool": "iperf3", "twin": 0, "src": "spark01", "dst": "spark02", "gbps": 0.25,
         "crossings": [cross, other, cross]},
        {"tool": "iperf3", "twin": 1, "src": "spark01", "dst": "spark02", "gbps": 0.5,
         "crossings": [cross]},
        {"tool": "iperf3", "twin": 0, "src": "spark01", "dst": "spark03", "gbps": 0.49,
         "crossings": [{**cross, "link": ["L1"]}]},
        {"tool": "iperf3", "twin": 0, "src": "spark01", "dst": "spark04", "gbps": None,
         "crossings": [cross]},
    ]
    tests = _Tests(rows)
    assert tests.through(("iperf3", 0), way) == (
        "; tests that way: spark01→spark02 0.25 Gb/s, spark01→spark04 failed")
    assert tests.through(("iperf3", 1), way) == "; the only test that way: spark01→spark02 0.5 Gb/s"
    assert tests.through(("ib_write_bw", 0), way) == ""
    assert tests.through(("iperf3", 0), None) == ""
