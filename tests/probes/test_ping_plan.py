"""Ping matrix planner: pairs that share a subnet, both directions, jumbo and small sizes."""

from __future__ import annotations

from collections import Counter

from fabric.intent.model import Intent
from fabric.probes.ping import (
    FIRST_WAIT_S,
    RETRIES,
    RETRY_MARK,
    WAIT_S,
    burst_script,
    ping_probes,
    probes_by_host,
)


def test_star4_every_twin_pair_in_its_rail_both_ways(intents: dict[str, Intent]) -> None:
    probes = ping_probes(intents["star4"])
    # 2 rails x 4 twins x 3 peers x 2 sizes
    assert len(probes) == 2 * 4 * 3 * 2
    pairs = {(p.src_host, p.dst_host, p.src_netdev) for p in probes}
    assert ("spark01", "spark03", "enp1s0f0np0") in pairs
    assert ("spark03", "spark01", "enp1s0f0np0") in pairs
    assert all(p.link_id is None for p in probes)  # a star pair rides two cables


def test_star_rails_never_cross(intents: dict[str, Intent]) -> None:
    for p in ping_probes(intents["star8"]):
        assert p.dst_addr.startswith("10.210.0.") == (p.src_netdev == "enp1s0f0np0")


def test_ring4_pairs_are_the_cable_ends(intents: dict[str, Intent]) -> None:
    intent = intents["ring4"]
    probes = ping_probes(intent)
    assert len(probes) == 4 * 2 * 2 * 2  # cables x rails x directions x sizes
    for p in probes:
        assert p.link_id is not None
        link = intent.link(p.link_id)
        assert {p.src_host, p.dst_host} == {link.a.host, link.b.host}
    per_link = Counter(p.link_id for p in probes)
    assert set(per_link.values()) == {8}


def test_sizes_are_jumbo_and_small(intents: dict[str, Intent]) -> None:
    probes = ping_probes(intents["ring4"])
    assert {p.payload for p in probes} == {8972, 56}
    jumbo = next(p for p in probes if p.payload == 8972)
    first = jumbo.ping(FIRST_WAIT_S)
    assert f"-M do -s 8972 -c 1 -W {FIRST_WAIT_S:g} " in first and " -i " not in first
    assert first.endswith(f"-I {jumbo.src_netdev} {jumbo.dst_addr}")
    # each retry: one more echo, only when the one before was lost
    retries = jumbo.retries().split(" || ")
    assert len(retries) == RETRIES
    assert all(r == f"{{ echo {RETRY_MARK}; {jumbo.ping(WAIT_S)}; }}" for r in retries)


def test_burst_sends_one_echo_each_and_retries_only_failures(
        intents: dict[str, Intent]) -> None:
    """Every first echo starts at once (backgrounded, no subshell per probe); a probe's
    retries start only when its own first echo failed; nothing sleeps."""
    probes = ping_probes(intents["ring4"], sources=["spark01"])
    script = burst_script(probes)
    lines = script.splitlines()
    firsts = [ln for ln in lines if f"-W {FIRST_WAIT_S:g} " in ln]
    assert len(firsts) == len(probes) and all(ln.endswith("=$!") for ln in firsts)
    retries = [ln for ln in lines if RETRY_MARK in ln]
    assert len(retries) == len(probes)
    assert all(ln.startswith(f"q{i}=; if [ $r{i} != 0 ]; then") for i, ln in enumerate(retries))
    assert "sleep" not in script


def test_sources_filter_and_grouping(intents: dict[str, Intent]) -> None:
    probes = ping_probes(intents["star4"], sources=["spark02"])
    assert {p.src_host for p in probes} == {"spark02"}
    grouped = probes_by_host(ping_probes(intents["star4"]))
    assert sorted(grouped) == ["spark01", "spark02", "spark03", "spark04"]
    assert {len(v) for v in grouped.values()} == {12}
