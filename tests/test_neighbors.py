"""fabric.neighbors: LLDP ages as both platforms print them, and which entries are stale."""

from __future__ import annotations

import pytest

from fabric.facts import NeighborFact
from fabric.intent.build import load_intent
from fabric.neighbors import age_seconds, endpoint, mark_stale


@pytest.mark.parametrize(("text", "seconds"), [
    ("0 day, 00:01:58", 118.0), ("2 days, 01:00:05", 2 * 86400 + 3605.0),
    ("10s", 10.0), ("1m5s", 65.0), ("1w2d3h4m5s", 9 * 86400 + 3 * 3600 + 245.0),
    ("00:00:10", 10.0), ("1d02:03:04", 86400 + 7384.0), ("350ms", 0.35),
    (None, None), ("soon", None), ("", None),
])
def test_age_seconds(text: str | None, seconds: float | None) -> None:
    assert age_seconds(text) == (seconds if seconds is None else pytest.approx(seconds))


def _n(local: str, system: str, port: str, age: float | None) -> NeighborFact:
    return NeighborFact(local_port=local, system_name=system, port_id=port, age_s=age)


def _stale(entries: list[NeighborFact], links: dict[str, float] | None = None,
           by_last_frame: bool = True) -> list[str]:
    intent = load_intent("star4", None)
    marked = mark_stale(entries, lambda n: endpoint(intent, n.system_name, n.port_id), links,
                        by_last_frame)
    return [f"{n.local_port}<-{n.system_name}:{n.port_id}" for n in marked if n.stale]


def test_twins_of_one_spark_are_one_neighbour() -> None:
    """A lane hears both twins of spark02 (two port ids, one port p0): neither is stale."""
    lane = [_n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 3.0),
            _n("qsfp56-dd-2-1", "spark02", "enP2p1s0f0np0", 9.0)]
    assert _stale(lane) == []
    assert endpoint(load_intent("star4", None), "spark02", "enP2p1s0f0np0") == "spark02:p0"


def test_ros_a_neighbour_heard_longer_ago_on_the_same_port_is_superseded() -> None:
    entries = [_n("qsfp56-dd-2-1", "spark03", "enp1s0f0np0", 31.0),
               _n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 2.0),
               _n("qsfp56-dd-3-1", "spark03", "enp1s0f0np0", 31.0)]
    assert _stale(entries) == ["qsfp56-dd-2-1<-spark03:enp1s0f0np0"]


def test_lldpd_several_neighbours_on_a_port_are_all_stale() -> None:
    """A swap put back within the TTL: lldpd lists the lane it is on again (learned 11 min
    ago, re-heard since without its age changing) and the swapped-in one (learned 4 s ago,
    no longer heard). The younger is the wrong one: neither is judged."""
    entries = [_n("enp1s0f0np0", "crs804", "qsfp56-dd-2-1", 672.0),
               _n("enp1s0f0np0", "crs804", "qsfp56-dd-3-1", 4.0),
               _n("enP2p1s0f0np0", "crs804", "qsfp56-dd-2-1", 672.0)]
    assert _stale(entries, by_last_frame=False) == [
        "enp1s0f0np0<-crs804:qsfp56-dd-2-1", "enp1s0f0np0<-crs804:qsfp56-dd-3-1"]
    lane = [_n("qsfp56-dd-2-1", "spark02", "enp1s0f0np0", 3.0),
            _n("qsfp56-dd-2-1", "spark02", "enP2p1s0f0np0", 9.0)]
    assert _stale(lane, by_last_frame=False) == []  # twins: one neighbour


def test_a_tie_or_an_unknown_age_is_not_an_order_none_is_judged() -> None:
    both = ["p<-crs804:qsfp56-dd-2-1", "p<-crs804:qsfp56-dd-3-1"]
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", 10.0),
                   _n("p", "crs804", "qsfp56-dd-3-1", 10.0)]) == both
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", None),
                   _n("p", "crs804", "qsfp56-dd-3-1", 10.0)]) == both
    assert _stale([_n("p", "crs804", "qsfp56-dd-2-1", None)]) == []  # one: it is the cable


def test_heard_before_the_last_link_up_is_stale() -> None:
    """RouterOS: the lane came up 5 s ago; an entry last heard 30 s ago is from before."""
    lanes = [_n("qsfp56-dd-2-1", "spark03", "enp1s0f0np0", 30.0),
             _n("qsfp56-dd-3-1", "spark03", "enp1s0f0np0", 2.0)]
    assert _stale(lanes, {"qsfp56-dd-2-1": 5.0, "qsfp56-dd-3-1": 5.0}) == [
        "qsfp56-dd-2-1<-spark03:enp1s0f0np0"]
