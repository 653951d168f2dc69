"""Run the active probes a validation needs and add their facts: the ping matrix (for mtu),
the bandwidth schedule (for bw) and nccl-tests (for nccl). Only Sparks whose facts were read
take part."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from nornir.core import Nornir
from rich.progress import Progress

from fabric.facts import Facts, NcclFact, PingFact
from fabric.intent.model import Intent
from fabric.probes.bandwidth import cable_facts, measurements_dicts, rdma_gids, run_schedule
from fabric.probes.counters import Snapshot, counter_window
from fabric.probes.nccl import TESTS, plan_nccl, with_missing
from fabric.probes.ping import plan_ping_matrix, probes_by_host
from fabric.probes.schedule import BandwidthTest, plan_bandwidth
from fabric.tasks.run_nccl_tests import find_nccl_tests, run_nccl_tests
from fabric.tasks.run_ping_matrix import run_ping_matrix

Say = Callable[[str], None]


@dataclass(frozen=True)
class ProbeOptions:
    """Which probes to run and how long; duration None: the link profile's default."""

    ping: bool = True
    bandwidth: bool = True
    duration_s: float | None = None
    rate: str | None = None  # iperf3 -b per twin (None: the profile's default)
    nccl: bool = False
    hosts: frozenset[str] | None = None  # --hosts: ping only among these


def run_pings(nr: Nornir, intent: Intent, facts: Facts, progress: Progress | None = None,
              targets: frozenset[str] | None = None) -> tuple[PingFact, ...]:
    """The ping matrix from every reachable Spark (to `targets` only, if given), each host's
    pings in one batch."""
    probes = plan_ping_matrix(intent, sources=sorted(facts.sparks), targets=targets)
    by_host = probes_by_host(probes)
    sub = nr.filter(filter_func=lambda h: h.name in by_host)
    rows = {}
    if progress is not None:
        for host in sorted(by_host):
            rows[host] = progress.add_task(f"ping {host}", total=1,
                                           status=f"{len(by_host[host])} pings")
    agg = sub.run(task=run_ping_matrix, probes=probes, name="ping matrix", raise_on_error=False)
    out: list[PingFact] = []
    for host, plist in sorted(by_host.items()):
        multi = agg.get(host)
        if multi is None or multi.failed:
            why = "probe did not run" if multi is None else str(multi[0].exception)[:200]
            out.extend(PingFact(p.src_host, p.src_netdev, p.dst_host, p.dst_netdev, p.dst_addr,
                                p.payload, 0, 0, error=f"probe failed: {why}",
                                link_id=p.link_id) for p in plist)
            status = "[red]failed"
        else:
            out.extend(multi[0].result)
            lost = sum(1 for f in multi[0].result if f.received == 0)
            status = "[green]done" if not lost else f"[yellow]{lost} lost"
        if progress is not None:
            progress.update(rows[host], completed=1, status=status)
    return tuple(out)


def run_bandwidth(nr: Nornir, intent: Intent, facts: Facts, opts: ProbeOptions,
                  progress: Progress | None = None, say: Say | None = None) -> Facts:
    """Plan, print and run the bandwidth schedule; facts with `bandwidth` and `schedule`."""
    duration = opts.duration_s or intent.profile.bandwidth_test_s
    rate = opts.rate or intent.profile.iperf3_rate_per_twin
    probe = plan_bandwidth(intent, duration, hosts=sorted(facts.sparks))
    gids, no_rdma = rdma_gids(probe, facts)
    phases = 1 + (3 if gids else 0)
    schedule = plan_bandwidth(intent, duration * phases, hosts=sorted(facts.sparks))
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
    measured, walls = run_schedule(nr, schedule, duration, gids, rate, on_round)
    if progress is not None and row is not None:
        progress.update(row, completed=len(schedule.rounds), status="[green]done")
    info = {**schedule.to_dict(), "duration_s": duration, "tools_per_test": phases,
            "iperf3_rate": rate or "unlimited",
            "round_wall_s": walls, "wall_s": round(time.monotonic() - started, 3),
            "rdma": "ib_write_bw per twin and both twins" if gids else
            "skipped: " + (_grouped(no_rdma) or "no tests"),
            "measurements": measurements_dicts(measured)}
    return dataclasses.replace(facts, bandwidth=tuple(cable_facts(schedule, measured)),
                               schedule=info)


def run_nccl(nr: Nornir, intent: Intent, facts: Facts, say: Say | None = None) -> Facts:
    """Find nccl-tests on every reachable Spark (absent tools go to `missing`), then run each
    test installed everywhere from rank 0; facts with `nccl`."""
    sub = nr.filter(filter_func=lambda h: h.name in facts.sparks)
    agg = sub.run(task=find_nccl_tests, name="find nccl-tests", raise_on_error=False)
    found = {h: m[0].result for h, m in agg.items() if not m.failed}
    facts = with_missing(facts, found)
    jobs = plan_nccl(intent, facts, found)
    if not jobs:
        if say is not None:
            say(f"nccl-tests not run: {', '.join(TESTS)} and mpirun are not on every Spark")
        return facts
    if say is not None:
        say("\n".join(f"nccl-tests: {j.command}" for j in jobs))
    rank0 = jobs[0].hosts[0]
    run = nr.filter(filter_func=lambda h: h.name == rank0).run(
        task=run_nccl_tests, jobs=jobs, name="nccl-tests", raise_on_error=False)
    multi = run.get(rank0)
    if multi is None or multi.failed:
        why = "did not run" if multi is None else str(multi[0].exception)[:200]
        runs = tuple(NcclFact(j.test, j.hosts, None, f"nccl-tests {why}") for j in jobs)
    else:
        runs = tuple(multi[0].result)
    return dataclasses.replace(facts, nccl=runs)


def run_probes(nr: Nornir, intent: Intent, facts: Facts, opts: ProbeOptions,
               progress: Progress | None = None, say: Say | None = None,
               snapshot: Snapshot | None = None) -> Facts:
    """The facts plus what the selected probes measured; with `snapshot`, also the counters
    read just before and just after the probes (`Facts.counters`)."""
    before = snapshot() if snapshot is not None else None
    started = time.monotonic()
    ran: list[str] = []
    if opts.ping and facts.sparks:
        facts = dataclasses.replace(facts, pings=run_pings(nr, intent, facts, progress,
                                                           opts.hosts))
        ran.append("ping")
    if opts.bandwidth and len(facts.sparks) >= 2:
        facts = run_bandwidth(nr, intent, facts, opts, progress, say)
        ran.append("bandwidth")
    if opts.nccl and facts.sparks:
        facts = run_nccl(nr, intent, facts, say)
        ran.append("nccl")
    if snapshot is not None and before is not None:
        window = counter_window(before, snapshot(), ran, time.monotonic() - started)
        facts = dataclasses.replace(facts, counters=window)
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
