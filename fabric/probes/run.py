"""Run the active probes a validation needs and add their facts: the ping matrix (for mtu),
the bandwidth schedule (for bw) and nccl-tests (for nccl). Only Sparks whose facts were read
take part.

What rode along with the facts (`fabric.probes.facts_burst`: the pings, the bandwidth servers'
start-up, the nccl-tests search, the counters' "before" snapshot) is taken from there; this
module goes on with what follows, in the order the plan shows (`fabric.probes.validation_plan`):
the bandwidth rounds once every ping is back (pings and bandwidth tests never share a NIC), then
nccl-tests, then the counters' "after" snapshot.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nornir.core import Nornir

from fabric.facts import TESTS, Facts, NcclFact, PingFact
from fabric.intent.model import Intent
from fabric.intent.platforms import roce_qos
from fabric.probes.bandwidth import cable_facts, measurements_dicts, rdma_gids, run_schedule
from fabric.probes.counters import Snapshot, counter_window
from fabric.probes.facts_burst import FactsBurstResults, ProbeOptions, ping_row
from fabric.probes.measure import Measurement
from fabric.probes.nccl import nccl_jobs, with_missing
from fabric.probes.ping import ping_probes, probes_by_host
from fabric.probes.retest import retest_stragglers
from fabric.probes.run_nccl_tests import find_nccl_tests, run_nccl_tests
from fabric.probes.run_ping_matrix import run_ping_matrix
from fabric.probes.schedule import BandwidthTest, Schedule, schedule_bandwidth
from fabric.remote.runner import run

if TYPE_CHECKING:
    from rich.progress import Progress

Say = Callable[[str], None]

__all__ = ["ProbeOptions", "run_probes"]


def run_pings(nr: Nornir, intent: Intent, facts: Facts, progress: Progress | None = None,
              targets: frozenset[str] | None = None) -> tuple[PingFact, ...]:
    """The ping matrix from every reachable Spark (to `targets` only, if given), each host's
    pings in one parallel burst."""
    probes = ping_probes(intent, sources=sorted(facts.sparks), targets=targets)
    by_host = probes_by_host(probes)
    sub = nr.filter(filter_func=lambda h: h.name in by_host)
    ran, errors = run(sub, run_ping_matrix, hosts=sorted(by_host), probes=probes,
                      name="ping matrix")
    out: list[PingFact] = []
    for host, plist in sorted(by_host.items()):
        if host in errors:
            why = errors[host]
            found = [PingFact(p.src_host, p.src_netdev, p.dst_host, p.dst_netdev, p.dst_addr,
                              p.payload, 0, 0, error=f"probe failed: {why}",
                              link_id=p.link_id) for p in plist]
            ping_row(progress, host, found, failed=why)
        else:
            found = ran[host]
            ping_row(progress, host, found)
        out.extend(found)
    return tuple(out)


def _same_tests(a: Sequence[BandwidthTest], b: Sequence[BandwidthTest]) -> bool:
    """Whether servers started for tests `a` serve tests `b` (same pairs, twins, addresses)."""
    def key(tests: Sequence[BandwidthTest]) -> list[tuple[Any, ...]]:
        return [(t.index, t.client, t.server, t.legs) for t in tests]
    return key(a) == key(b)


def rdma_tclass(intent: Intent) -> int | None:
    """The ToS byte RDMA tests run with: a lossless topology's RoCE class (DSCP 26, so the
    switch and the NICs put the test in the PFC/ECN class; without it perftest runs at DSCP 0,
    the lossy queue), else None."""
    return roce_qos().traffic_class_byte if intent.lossless else None


def run_bandwidth(nr: Nornir, intent: Intent, facts: Facts, opts: ProbeOptions,
                  progress: Progress | None = None, say: Say | None = None,
                  early: FactsBurstResults | None = None,
                  under_way: Callable[[], None] | None = None,
                  settle: Callable[[], None] | None = None) -> Facts:
    """Plan, print and run the bandwidth schedule; facts with `bandwidth` and `schedule`.
    The servers `early` started are used when they were started for this very schedule.
    `under_way()`: called once the first round's clients are connected; `settle()`: waits
    for what runs beside the rounds (the facts read behind them), before any re-test."""
    duration = opts.duration_s or intent.profile.bandwidth_test_s
    rate = opts.rate or intent.profile.iperf3_rate_per_twin
    probe = schedule_bandwidth(intent, duration, hosts=sorted(facts.sparks))
    gids, no_rdma = rdma_gids(probe, facts)
    phases = 1 + (3 if gids else 0)
    schedule = schedule_bandwidth(intent, duration * phases, hosts=sorted(facts.sparks))
    ports = None
    if early is not None and early.ports is not None and _same_tests(early.servers_for,
                                                                      schedule.tests):
        ports = early.ports
    if say is not None:
        say(schedule.describe())
        if no_rdma:
            say(f"ib_write_bw skipped: {_grouped(no_rdma)}")
    row = None
    if progress is not None:
        row = progress.add_task("bandwidth", total=max(1, len(schedule.rounds)), status="")

    def on_round(i: int, tests: tuple[BandwidthTest, ...]) -> None:
        if progress is not None and row is not None:
            pairs = ", ".join(f"{t.client}->{t.server}" for t in tests)
            progress.update(row, completed=i, status=f"round {i + 1}/{len(schedule.rounds)}: "
                            f"{pairs}")

    started = time.monotonic()
    tclass = rdma_tclass(intent)
    measured, walls = run_schedule(nr, schedule, duration, gids, rate, on_round, ports, tclass,
                                   under_way)
    def again(retest: Schedule) -> tuple[list[Measurement], list[float]]:
        if settle is not None:  # a re-test runs on quiet hosts, nothing read beside it
            settle()
        if say is not None:
            say("re-testing once, a straggler each: " + ", ".join(
                f"{t.client}<->{t.server}" for t in retest.tests))
        if progress is not None and row is not None:
            progress.update(row, status="re-testing the stragglers")
        return run_schedule(nr, retest, duration, gids, rate, None, None, tclass)

    measured, walls, retested = retest_stragglers(
        schedule, measured, walls, intent.profile.straggler_fraction, again)
    if progress is not None and row is not None:
        progress.update(row, completed=len(schedule.rounds), status="[green]done")
    info = {**schedule.to_dict(), "duration_s": duration, "tools_per_test": phases,
            "iperf3_rate": rate or "unlimited",
            "round_wall_s": walls, "wall_s": round(time.monotonic() - started, 3),
            "retested": [{"index": t.index, "round": t.round, "client": t.client,
                          "server": t.server} for t in retested],
            "servers": "started with the facts" if ports is not None else "started first",
            "rdma": ("ib_write_bw per twin and both twins" + (
                f" in the lossless class (--tclass {tclass}: DSCP {roce_qos().dscp})"
                if tclass is not None else "")) if gids else
            "skipped: " + (_grouped(no_rdma) or "no tests"),
            "measurements": measurements_dicts(measured)}
    return dataclasses.replace(facts, bandwidth=tuple(cable_facts(schedule, measured)),
                               schedule=info)


def run_nccl(nr: Nornir, intent: Intent, facts: Facts, say: Say | None = None,
             found: Mapping[str, Mapping[str, str | None]] | None = None) -> Facts:
    """Find nccl-tests on every reachable Spark (absent tools go to `missing`; `found`: the
    search already ran), then run each test installed everywhere from rank 0; facts with
    `nccl`."""
    if found is None:
        sub = nr.filter(filter_func=lambda h: h.name in facts.sparks)
        found, _ = run(sub, find_nccl_tests, name="find nccl-tests")
    facts = with_missing(facts, found)
    jobs = nccl_jobs(intent, facts, found)
    if not jobs:
        if say is not None:
            say(f"nccl-tests not run: {', '.join(TESTS)} and mpirun are not on every Spark")
        return facts
    if say is not None:
        say("\n".join(f"nccl-tests: {j.command}" for j in jobs))
    rank0 = jobs[0].hosts[0]
    ran, errors = run(nr.filter(filter_func=lambda h: h.name == rank0), run_nccl_tests,
                      hosts=[rank0], jobs=jobs, name="nccl-tests")
    if rank0 in errors:
        runs = tuple(NcclFact(j.test, j.hosts, None, f"nccl-tests {errors[rank0]}")
                     for j in jobs)
    else:
        runs = tuple(ran[rank0])
    return dataclasses.replace(facts, nccl=runs)


def run_probes(nr: Nornir, intent: Intent, facts: Facts, opts: ProbeOptions,
               progress: Progress | None = None, say: Say | None = None,
               snapshot: Snapshot | None = None, early: FactsBurstResults | None = None,
               started: float | None = None,
               mark: Callable[[str], None] | None = None,
               rest: Callable[[Facts], Facts] | None = None,
               behind: Callable[[], None] | None = None,
               settle: Callable[[], None] | None = None) -> Facts:
    """The facts plus what the selected probes measured; with `snapshot`, also the counters
    read just before and just after the probes (`Facts.counters`). `early`: what already ran
    with the facts (pings, servers, the "before" snapshot, from `started`). `mark(phase)` is
    called as each phase ends. `rest(facts)`: the facts read behind the bandwidth rounds
    (`fabric.collect.gather.finish`), waited for once they are done, before nccl-tests;
    `behind()` sets them going, once the first round's clients are connected; `settle()`
    waits for them (before a re-test of a straggler)."""
    def done(phase: str) -> None:
        if mark is not None:
            mark(phase)

    early = early or FactsBurstResults()
    before = early.before
    if snapshot is not None and before is None:
        before, started = snapshot(), None
        done("counters before")
    started = time.monotonic() if started is None else started
    ran: list[str] = []
    if opts.ping and facts.sparks:
        pings = early.pings
        if pings is None:
            pings = run_pings(nr, intent, facts, progress, opts.hosts)
            done("pings")
        facts = dataclasses.replace(facts, pings=pings)
        ran.append("ping")
    if opts.bandwidth and len(facts.sparks) >= 2:
        facts = run_bandwidth(nr, intent, facts, opts, progress, say, early, behind, settle)
        ran.append("bandwidth")
        done("bandwidth")
    if rest is not None:
        facts = rest(facts)
        done("facts behind the rounds")
    if opts.nccl and facts.sparks:
        facts = run_nccl(nr, intent, facts, say, early.nccl_tools)
        ran.append("nccl")
        done("nccl")
    if snapshot is not None and before is not None:
        window = counter_window(before, snapshot(), ran, time.monotonic() - started)
        facts = dataclasses.replace(facts, counters=window)
        done("counters after")
    return facts


def _grouped(reasons: list[str]) -> str:
    """'host dev: why' lines folded per reason: 'no RDMA devices on spark01, spark02'."""
    by_why: dict[str, list[str]] = {}
    for line in reasons:
        who, _, why = line.partition(": ")
        host = who.split()[0]
        if host not in by_why.setdefault(why, []):
            by_why[why].append(host)
    return "; ".join(f"{why} on {', '.join(hosts)}" for why, hosts in by_why.items())
