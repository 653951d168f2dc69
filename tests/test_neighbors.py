"""fabric.neighbors: LLDP ages as both platforms print them, and which entries are stale."""

from __future__ import annotations

import re

import pytest

from fabric.facts import Facts, LaneFact, NeighborFact, SparkFacts, SwitchFacts, VersionFacts
from fabric.intent.build import load_intent
from fabric.neighbors import (
    ROS_MARGIN_S,
    SPARK_MARGIN_S,
    age_seconds,
    endpoint,
    heard_after,
    judge_lldpd,
    mark_stale,
    new_beacon,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("0 day, 00:01:58", 118.0), ("2 days, 01:00:05", 2 * 86400 + 3605.0),
    ("10s", 10.0), ("1m5s", 65.0), ("1w2d3h4m5s", 9 * 86400 + 3 * 3600 + 245.0),
    ("00:00:10", 10.0), ("1d02:03:04", 86400 + 7384.0), ("350ms", 0.35),
    (None, None), ("soon", None), ("", None),
])
def test_age_seconds(text: str | None, seconds: float | None) -> None:
    assert age_seconds(text) == (seconds if seconds is None else pytest.approx(seconds))


def _n(local: str, system: str, port: str, age: float | None,
       beacon: str | None = None) -> NeighborFact:
    return NeighborFact(local_port=local, system_name=system, port_id=port, age_s=age,
                        beacon=beacon)


def _stale(entries: list[NeighborFact], links: dict[str, float] | None = None) -> list[str]:
    intent = load_intent("star4", None)
    marked = mark_stale(entries, lambda n: endpoint(intent, n.system_name, n.port_id), links)
    return [f"{n.local_port}<-{n.system_name}:{n.port_id}" for n in marked if n.stale]


def test_twins_of_one_spark_are_one_neighbour() -> None:
    """A lane hears both twins of spark02 (two port ids, one port p0): neither is stale."""
    lane = [_n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 3.0),
            _n("qsfp56-dd-2-1", "spark02", "enP2p1s0f0np0", 9.0)]
    assert _stale(lane) == []
    assert _stale(lane, {"qsfp56-dd-2-1": 60.0}) == []
    assert endpoint(load_intent("star4", None), "spark02", "enP2p1s0f0np0") == "spark02:p0"


def test_untimed_ros_a_neighbour_heard_longer_ago_on_the_same_port_is_superseded() -> None:
    entries = [_n("qsfp56-dd-2-1", "spark03", "enp1s0f0np0", 31.0),
               _n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 2.0),
               _n("qsfp56-dd-3-1", "spark03", "enp1s0f0np0", 31.0)]
    assert _stale(entries) == ["qsfp56-dd-2-1<-spark03:enp1s0f0np0"]


def test_untimed_a_tie_or_an_unknown_age_is_not_an_order_none_is_judged() -> None:
    both = ["p<-crs804:qsfp56-dd-2-1", "p<-crs804:qsfp56-dd-3-1"]
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", 10.0),
                   _n("p", "crs804", "qsfp56-dd-3-1", 10.0)]) == both
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", None),
                   _n("p", "crs804", "qsfp56-dd-3-1", 10.0)]) == both
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", None)]) == []  # one: it is the cable


def test_heard_before_the_last_link_change_is_stale() -> None:
    """RouterOS: the lanes changed 5 s ago (a swap); the entry last heard 30 s ago is from
    before, the one heard 2 s ago after."""
    lanes = [_n("qsfp56-dd-2-1", "spark03", "enp1s0f0np0", 30.0),
             _n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 2.0),
             _n("qsfp56-dd-3-1", "spark03", "enp1s0f0np0", 2.0)]
    assert _stale(lanes, {"qsfp56-dd-2-1": 5.0, "qsfp56-dd-3-1": 5.0}) == [
        "qsfp56-dd-2-1<-spark03:enp1s0f0np0"]


def test_whole_seconds_need_a_margin_before_an_entry_counts_as_heard_after() -> None:
    """Heard 1 s before a change 2 s ago prints as age 3 or 2: not certainly after; an age of
    unknown is never after; the margin is ROS_MARGIN_S."""
    assert heard_after(0.0, ROS_MARGIN_S, ROS_MARGIN_S)
    assert not heard_after(1.0, ROS_MARGIN_S, ROS_MARGIN_S)
    assert not heard_after(None, 100.0, ROS_MARGIN_S)
    assert _stale([_n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 1.0)],
                  {"qsfp56-dd-2-1": 2.0}) == ["qsfp56-dd-2-1<-spark02:enp1s0f0np0"]


def _lldpd_facts(entries: dict[str, list[NeighborFact]], lane_ages: dict[str, float | None],
                 announced: str | None) -> Facts:
    intent = load_intent("star4", None)
    sparks = {h: _spark(h, tuple(ns), announced) for h, ns in entries.items()}
    lanes = {name: LaneFact(name=name, disabled=False, running=True, mtu=9000, l2mtu=None,
                            max_l2mtu=None, speed=None, auto_negotiation=None, fec_mode=None,
                            status="link-ok", rate="200Gbps", link_change_age_s=age)
             for name, age in lane_ages.items()}
    assert intent.switch is not None
    switch = SwitchFacts(host=intent.switch.host, identity="crs804", version="7.17",
                         board=None, lanes=lanes, bridges=(), neighbors=())
    return Facts(collected="", topology="star4", sparks=sparks, switch=switch, errors={})


def _spark(host: str, neighbors: tuple[NeighborFact, ...], beacon: str | None) -> SparkFacts:
    return SparkFacts(host=host, hostname=host, netdevs={}, routes=(), ethtool={}, rdma={},
                      gids=(), neighbors=neighbors, versions=VersionFacts(), time=None,
                      forward_policy=None, qos={}, lldp_beacon=beacon)


def _judged(facts: Facts, beacon: str | None) -> dict[str, list[str]]:
    marked = judge_lldpd(load_intent("star4", None), facts, beacon)
    return {h: [f"{n.system_name}:{n.port_id}" for n in sf.neighbors if not n.stale]
            for h, sf in marked.sparks.items()}


def test_lldpd_swap_put_back_within_the_ttl_leaves_no_fresh_entry_on_the_spark() -> None:
    """spark02's twin lists the lane it is on again (learned 11 min ago, re-heard since
    without its age changing) and the swapped-in one (learned 20 s ago, no longer heard);
    the lanes changed 8 s ago. Neither was learned after that: neither is fresh, the switch
    decides."""
    facts = _lldpd_facts({"spark02": [_n("enp1s0f0np0", "crs804", "qsfp56-dd-2-1", 672.0),
                                      _n("enp1s0f0np0", "crs804", "qsfp56-dd-3-1", 20.0)]},
                         {"qsfp56-dd-2-1": 8.0, "qsfp56-dd-3-1": 8.0}, "AA,BB")
    assert _judged(facts, "AA,BB") == {"spark02": []}


def test_lldpd_switch_entry_learned_well_after_its_lanes_last_change_is_fresh() -> None:
    facts = _lldpd_facts({"spark02": [_n("enp1s0f0np0", "crs804", "qsfp56-dd-2-1", 600.0)]},
                         {"qsfp56-dd-2-1": 600.0 + SPARK_MARGIN_S}, "AA,BB")
    assert _judged(facts, "AA,BB") == {"spark02": ["crs804:qsfp56-dd-2-1"]}
    # learned within the margin of the change, or a lane that does not say: not evidence
    for ages in ({"qsfp56-dd-2-1": 603.0}, {"qsfp56-dd-2-1": None}, {}):
        assert _judged(_lldpd_facts({"spark02": [
            _n("enp1s0f0np0", "crs804", "qsfp56-dd-2-1", 600.0)]}, ages, "AA,BB"),
            "AA,BB") == {"spark02": []}


def test_lldpd_a_spark_neighbour_is_fresh_only_with_this_runs_beacon() -> None:
    """Spark to Spark: the entry carrying the beacon was heard during this run; one with an
    earlier run's beacon, or none, is not (however young its age)."""
    entries = {"spark01": [_n("enp1s0f0np0", "spark02", "enp1s0f1np1", 0.0, "AA,BB"),
                           _n("enp1s0f0np0", "spark03", "enp1s0f1np1", 0.0, "01,02"),
                           _n("enp1s0f0np0", "spark04", "enp1s0f1np1", 0.0)]}
    facts = _lldpd_facts(entries, {}, "AA,BB")
    assert _judged(facts, "AA,BB") == {"spark01": ["spark02:enp1s0f1np1"]}
    assert _judged(facts, None) == {"spark01": []}  # no beacon this run: nothing certifies


def test_a_beacon_is_four_bytes_as_lldpcli_prints_them() -> None:
    value = new_beacon()
    assert re.fullmatch(r"[0-9A-F]{2}(,[0-9A-F]{2}){3}", value)
    assert new_beacon() != value or new_beacon() != value


def test_a_switch_entry_heard_since_the_collection_began_is_fresh_whatever_the_link_did() -> None:
    """The lanes changed 2 s ago (a push's link training) and the entry was heard at this
    run's announcement: by the link change alone whole seconds cannot tell (age 1, change 2),
    but it was heard after the collection began 2.5 s ago: fresh. The swapped-out neighbour,
    heard before the run, stays stale."""
    entries = [_n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 1.0),
               _n("qsfp56-dd-3-1", "spark02", "enp1s0f0np0", 4.0)]
    links = {"qsfp56-dd-2-1": 2.0, "qsfp56-dd-3-1": 2.0}
    intent = load_intent("star4", None)
    marked = mark_stale(entries, lambda n: endpoint(intent, n.system_name, n.port_id), links,
                        heard_within_s=2.5)
    assert [n.stale for n in marked] == [False, True]
    assert all(n.stale for n in mark_stale(entries, lambda n: endpoint(
        intent, n.system_name, n.port_id), links))  # without it: not certain
