"""Ping matrix planner: pairs that share a subnet, both directions, jumbo and small sizes."""

from __future__ import annotations

import os
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from fabric.intent.model import Intent
from fabric.probes.ping import (
    FIRST_WAIT_S,
    RETRIES,
    RETRY_MARK,
    WAIT_S,
    PingProbe,
    burst_script,
    leads,
    ping_probes,
    probes_by_host,
    read_burst,
)


def test_star4_each_twin_pings_its_two_cycle_neighbours_both_ways(
        intents: dict[str, Intent]) -> None:
    probes = ping_probes(intents["star4"])
    # 2 rails x 4 twins x 2 neighbours x 2 sizes
    assert len(probes) == 2 * 4 * 2 * 2
    pairs = {(p.src_host, p.dst_host) for p in probes if p.src_netdev == "enp1s0f0np0"}
    assert pairs == {("spark01", "spark02"), ("spark02", "spark01"), ("spark02", "spark03"),
                     ("spark03", "spark02"), ("spark03", "spark04"), ("spark04", "spark03"),
                     ("spark04", "spark01"), ("spark01", "spark04")}
    assert all(p.link_id is None for p in probes)  # a star pair rides two cables


@pytest.mark.parametrize(("topology", "sparks"), [("star4", 4), ("star8", 8), ("star16", 16)])
def test_star_probes_grow_with_the_cables_not_the_pairs(topology: str, sparks: int) -> None:
    """Four jumbo echoes per twin (two sent, two answered for others): linear in the Sparks,
    where the whole matrix was n(n-1); every lane carries echoes to two partners."""
    from fabric.intent.build import load_intent

    intent = load_intent(topology)
    jumbo = [p for p in ping_probes(intent) if p.payload > 56]
    assert len(jumbo) == 2 * sparks * 2
    partners = defaultdict(set)
    for p in jumbo:
        partners[(p.src_host, p.src_netdev)].add(p.dst_host)
        partners[(p.dst_host, p.dst_netdev)].add(p.src_host)
    assert {len(v) for v in partners.values()} == {2}


def test_a_scope_of_three_sparks_pings_every_pair(intents: dict[str, Intent]) -> None:
    three = ["spark01", "spark02", "spark05"]
    probes = ping_probes(intents["star8"], sources=three, targets=three)
    assert {(p.src_host, p.dst_host) for p in probes} == {
        (a, b) for a in three for b in three if a != b}


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
    """Every pair's first jumbo echo starts at once (backgrounded, no subshell per probe); a
    jumbo's retries and its pair's small probe start only when that jumbo's first echo
    failed; nothing sleeps."""
    probes = ping_probes(intents["ring4"], sources=["spark01"])
    script = burst_script(probes)
    lines = script.splitlines()
    lead = leads(probes)
    jumbos = [i for i, j in enumerate(lead) if j is None]
    assert {probes[i].payload for i in jumbos} == {8972} and len(jumbos) == len(probes) // 2
    firsts = [ln for ln in lines if ln.startswith("echo '@@fabric-job begin")]
    assert len(firsts) == len(jumbos) and all(ln.endswith("=$!") for ln in firsts)
    later = [ln for ln in lines if RETRY_MARK in ln]
    assert len(later) == len(probes)
    for i, ln in enumerate(later):
        waits_on = i if lead[i] is None else lead[i]
        assert ln.startswith(f"q{i}=; if [ $r{waits_on} != 0 ]; then")
    assert "sleep" not in script


#: A stand-in for iputils ping: the jumbo echo to 10.9.0.2 is lost (a black hole: the small
#: one gets through), everything else is answered. Each call is logged.
FAKE_PING = """#!/bin/sh
echo "$*" >>"$PING_LOG"
size=$5 dev=${11} to=${12}
echo "PING $to ($to) from 10.9.0.1 $dev: $size($((size + 28))) bytes of data."
case "$size $to" in
  "8972 10.9.0.2") echo; echo "--- $to ping statistics ---"
    echo "1 packets transmitted, 0 received, 100% packet loss, time 0ms"; exit 1;;
esac
echo "$((size + 8)) bytes from $to: icmp_seq=1 ttl=64 time=0.050 ms"; echo
echo "--- $to ping statistics ---"
echo "1 packets transmitted, 1 received, 0% packet loss, time 0ms"
echo "rtt min/avg/max/mdev = 0.050/0.050/0.050/0.000 ms"
"""


def test_burst_sends_a_small_probe_only_where_the_jumbo_was_lost(tmp_path: Path) -> None:
    """Run as a shell script: the healthy pair costs one echo and has only its jumbo fact;
    the black-holed pair gets its jumbo retries and a small probe, whose fact tells the
    black hole (small passes) from a dead path."""
    (tmp_path / "ping").write_text(FAKE_PING)
    (tmp_path / "ping").chmod(0o755)
    log = tmp_path / "calls"
    probes = [PingProbe("a", "eth0", "b", "eth0", addr, size, None)
              for addr in ("10.9.0.2", "10.9.0.3") for size in (8972, 56)]
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "PING_LOG": str(log)}
    out = subprocess.run(["sh", "-c", burst_script(probes)], capture_output=True, text=True,
                         env=env, timeout=30, check=True).stdout
    facts = read_burst(probes, out)
    got = [(f.dst_addr, f.size, f.sent, f.received) for f in facts]
    assert got == [("10.9.0.2", 8972, 3, 0), ("10.9.0.2", 56, 1, 1), ("10.9.0.3", 8972, 1, 1)]
    calls = log.read_text().splitlines()
    assert sum("-s 8972" in c and c.endswith("10.9.0.3") for c in calls) == 1
    assert not any("-s 56" in c and c.endswith("10.9.0.3") for c in calls)


def test_sources_filter_and_grouping(intents: dict[str, Intent]) -> None:
    probes = ping_probes(intents["star4"], sources=["spark02"])
    assert {p.src_host for p in probes} == {"spark02"}
    grouped = probes_by_host(ping_probes(intents["star4"]))
    assert sorted(grouped) == ["spark01", "spark02", "spark03", "spark04"]
    assert {len(v) for v in grouped.values()} == {8}  # 2 rails x 2 neighbours x 2 sizes


def test_a_small_probe_that_was_not_sent_has_no_fact() -> None:
    """The small probe's output is absent both when its jumbo was answered and when the jumbo's
    ping exited 0 with output the parser could not read: either way it was not sent (the
    script only sends it after a failed jumbo) and must not read as a lost small echo."""
    probes = [PingProbe("a", "eth0", "b", "eth0", "10.9.0.2", size, None) for size in (8972, 56)]
    garbled = "@@fabric-job begin 0\nsomething unexpected\n\n@@fabric-job end 0 exit=0\n"
    facts = read_burst(probes, garbled)
    assert [(f.size, f.received) for f in facts] == [(8972, 0)]
    lost = ("@@fabric-job begin 0\n\n@@fabric-job end 0 exit=1\n"
            "@@fabric-job begin 1\n\n@@fabric-job end 1 exit=1\n")
    assert [f.size for f in read_burst(probes, lost)] == [8972, 56]
    nothing = read_burst(probes, "")  # the burst's output never came back
    assert [(f.size, f.error) for f in nothing] == [(8972, "no output came back"),
                                                    (56, "no output came back")]
