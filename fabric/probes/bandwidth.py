"""Run a bandwidth schedule round by round and turn the measurements into per-cable,
per-direction facts.

Per-crossing figure (a cable one way): the best measurement among the test directions that
crossed the cable that way, per tool and twin (see the localisation scheme in
`fabric.probes.schedule`). Its fact names the link and, in `src_host`/`dst_host`, the sender
and receiver of that best test direction, from which the crossing follows (`crossing`).
Every raw measurement is kept in `Facts.schedule["measurements"]` with the crossings it ran
through, so the report shows which pairs were slow which way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from typing import Any

from nornir.core import Nornir

from fabric.facts import BandwidthFact, Facts
from fabric.intent.wire import Crossing
from fabric.probes.measure import Measurement
from fabric.probes.run_bandwidth_pair import run_bandwidth_pair, start_bandwidth_servers
from fabric.probes.schedule import BandwidthTest, Schedule
from fabric.probes.tools import SLACK_S
from fabric.remote.runner import run

RoundHook = Callable[[int, tuple[BandwidthTest, ...]], None]


def rdma_gids(schedule: Schedule, facts: Facts) -> tuple[dict[int, dict[int, tuple[int, int]]],
                                                          list[str]]:
    """(RoCE v2 GID indexes per test and twin, reasons for every twin left without RDMA)."""
    gids: dict[int, dict[int, tuple[int, int]]] = {}
    reasons: list[str] = []
    for test in schedule.tests:
        for leg in test.legs:
            ends = ((test.client, leg.client_rdma, leg.client_addr),
                    (test.server, leg.server_rdma, leg.server_addr))
            found = [_gid(facts, host, dev, addr) for host, dev, addr in ends]
            missing = [f"{h} {d or '?'}: {why}" for (h, d, _), (_, why) in zip(ends, found,
                                                                             strict=True) if why]
            if missing:
                reasons.extend(missing)
                continue
            idx = (found[0][0], found[1][0])
            assert idx[0] is not None and idx[1] is not None
            gids.setdefault(test.index, {})[leg.twin] = (idx[0], idx[1])
    return gids, sorted(set(reasons))


def _gid(facts: Facts, host: str, rdma: str | None, addr: str) -> tuple[int | None, str]:
    spark = facts.sparks.get(host)
    if spark is None:
        return None, "no facts"
    if not spark.rdma:
        return None, "no RDMA devices"
    if rdma is None or rdma not in spark.rdma:
        return None, "RDMA device absent"
    for gid in spark.gids:
        if gid.rdma == rdma and gid.gid_type == "RoCE v2" and gid.ipv4 == addr:
            return gid.index, ""
    return None, f"no RoCE v2 GID for {addr}"


def run_schedule(nr: Nornir, schedule: Schedule, duration_s: float,
                 gids: Mapping[int, Mapping[int, tuple[int, int]]], rate: str | None = None,
                 on_round: RoundHook | None = None,
                 ports: Mapping[str, int | None] | None = None, tclass: int | None = None,
                 under_way: Callable[[], None] | None = None
                 ) -> tuple[list[Measurement], list[float]]:
    """Every round in turn, its tests in parallel; (measurements, wall seconds per round).
    `ports`: the iperf3 servers already started for this schedule (else they start first).
    `under_way()` is called once every client of the first round is connected to its server,
    its test timed from then (what runs beside the rounds then leaves their start alone)."""
    out: list[Measurement] = []
    walls: list[float] = []
    ports = dict(ports) if ports is not None else start_servers(nr, schedule)
    for i, tests in enumerate(schedule.rounds):
        if on_round is not None:
            on_round(i, tests)
        by_client = {t.client: t for t in tests}
        sub = nr.filter(filter_func=lambda h, names=frozenset(by_client): h.name in names)
        told = under_way if i == 0 else None
        latch = _AllStarted(by_client, told)
        started = time.monotonic()
        measured, errors = run(sub, run_bandwidth_pair, hosts=list(by_client), tests=by_client,
                               duration_s=duration_s, ports=ports, gids=gids, rate=rate,
                               peers=nr.inventory.hosts, tclass=tclass,
                               started=latch.started if told is not None else None,
                               name=f"bandwidth round {i + 1}")
        latch.release()  # a client that never ran
        walls.append(round(time.monotonic() - started, 3))
        for client, test in by_client.items():
            if client in errors:
                why = f"test failed: {errors[client]}"
                out.extend(Measurement(test.index, test.round, test.client, test.server,
                                       test.links, "iperf3", leg.twin, None, why, duration_s,
                                       reverse, test.crossings(reverse))
                           for reverse in (False, True) for leg in test.legs)
            else:
                out.extend(measured[client])
    return out, walls


class _AllStarted:
    """Calls `then()` once every host of `hosts` has said it `started` (or on `release`)."""

    def __init__(self, hosts: Iterable[str], then: Callable[[], None] | None) -> None:
        self.waiting = set(hosts)
        self.then = then
        self.lock = threading.Lock()

    def started(self, host: str) -> None:
        self._left(self.waiting - {host})

    def release(self) -> None:
        self._left(set())

    def _left(self, waiting: set[str]) -> None:
        with self.lock:
            self.waiting &= waiting
            then = None if self.waiting else self.then
            if then is not None:
                self.then = None
        if then is not None:
            then()


def server_life_s(schedule: Schedule, test_s: float | None = None) -> float:
    """How long the schedule's iperf3 servers may wait for their client: every round, each
    `test_s` (default the schedule's) plus slack, plus a margin."""
    per_test = schedule.test_s if test_s is None else test_s
    return len(schedule.rounds) * (per_test + 2 * SLACK_S) + 30


def start_servers(nr: Nornir, schedule: Schedule) -> dict[str, int | None]:
    """Start every iperf3 server of the schedule at once (one batch per serving host)."""
    servers = {t.server for t in schedule.tests}
    life = server_life_s(schedule)
    sub = nr.filter(filter_func=lambda h: h.name in servers)
    started, _ = run(sub, start_bandwidth_servers, tests=schedule.tests, life_s=life,
                     name="bandwidth servers")
    ports: dict[str, int | None] = {}
    for found in started.values():
        ports.update(found)
    return ports


def cable_facts(schedule: Schedule, measurements: Iterable[Measurement]) -> list[BandwidthFact]:
    """One BandwidthFact per cable, direction, tool and twin: the best test direction that
    crossed the cable that way (sender and receiver in `src_host`/`dst_host`)."""
    tests = {t.index: t for t in schedule.tests}
    best: dict[tuple[Crossing, str, int | None], Measurement] = {}
    tried: dict[tuple[Crossing, str, int | None], list[Measurement]] = {}
    for m in measurements:
        for way in _crossed(tests.get(m.test), m):
            key = (way, m.tool, m.twin)
            tried.setdefault(key, []).append(m)
            if key not in best or _score(m) > _score(best[key]):
                best[key] = m
    order = {c: i for i, c in enumerate(dict.fromkeys(
        c for t in schedule.tests for rev in (False, True) for c in t.crossings(rev)))}
    order_links = {lk: i for i, lk in enumerate(dict.fromkeys(
        lk for t in schedule.tests for lk in t.links))}
    facts: list[BandwidthFact] = []
    for key in sorted(best, key=lambda k: (order_links.get(k[0].link, 0), order.get(k[0], 0),
                                           k[1], -1 if k[2] is None else k[2])):
        m = best[key]
        error = m.error
        if error is not None and len(tried[key]) > 1:
            error = f"every test {key[0].label} failed: " + "; ".join(
                f"{t.src}→{t.dst}: {t.error}" for t in tried[key])
        facts.append(BandwidthFact(link_id=key[0].link, tool=m.tool, twin=m.twin,
                                   src_host=m.src, dst_host=m.dst, gbps=m.gbps, error=error,
                                   round=m.round, duration_s=m.duration_s))
    return facts


def _crossed(test: BandwidthTest | None, m: Measurement) -> tuple[Crossing, ...]:
    """The crossings of the measurement's way (from the measurement, else its test; without
    either, each of its links one way)."""
    if m.crossings:
        return m.crossings
    if test is not None and test.crossings(m.reverse):
        return test.crossings(m.reverse)
    return tuple(Crossing(lk, m.src, m.dst, "") for lk in m.links)


def _score(m: Measurement) -> float:
    return -1.0 if m.gbps is None else m.gbps


def measurements_dicts(measurements: Iterable[Measurement]) -> list[dict[str, Any]]:
    """Every measurement as a dict: its fields, `src`/`dst` (who sent to whom) and
    `crossings` (each cable and direction its way ran through)."""
    return [{**asdict(m), "links": list(m.links), "src": m.src, "dst": m.dst,
             "crossings": [c.to_dict() for c in m.crossings]} for m in measurements]
