"""A validation as a plan: which collections and probes run, on which hosts, in which bursts,
for which check families. Built from the intent and the families' declared needs
(`validators.registry.Needs`) before any host is touched; `fabric validate --plan` prints it,
`fabric.validate` runs it.

A burst starts once the previous one is done everywhere; within a burst every host runs its
steps at once (a Spark's in one burst on its session, `fabric.remote.burst`). With a counters
window judged, every host's "before" snapshot comes first; the facts, the pings, the bandwidth
servers' start-up and the nccl-tests search then share one burst per Spark; the bandwidth
rounds start once every ping is back (pings and bandwidth tests never share a NIC); then
nccl-tests, then the counters' "after" snapshot; the checks judge last, touching no host.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fabric.collect.gather import PROBE_ROWS, ConnectionWork, facts_batch_rows
from fabric.intent.model import Intent
from fabric.probes.facts_burst import MAX_TOOLS_PER_TEST, FactsBurstProbes, ProbeOptions
from validators.registry import BANDWIDTH, NCCL, PING, Needs

#: The schema of `fabric validate --plan --json`.
SCHEMA = "fabric.validate-plan/1"


@dataclass(frozen=True)
class Step:
    """One thing a burst does: `what` runs on `hosts` for `families`; `detail` says how much,
    `lines` lists it (per host or per round)."""

    what: str
    hosts: tuple[str, ...]
    families: tuple[str, ...]
    detail: str = ""
    lines: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "hosts": list(self.hosts), "families": list(self.families),
                "detail": self.detail, "lines": list(self.lines)}


@dataclass(frozen=True)
class Burst:
    """Steps that run at once; it starts when the previous burst is done on every host."""

    name: str
    steps: tuple[Step, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "steps": [s.to_dict() for s in self.steps]}


@dataclass(frozen=True)
class ValidationPlan:
    """What one validation collects and probes, where and in what order (`bursts`), for the
    `families` whose `checks` it judges. `collect`: the families whose facts the collectors
    read (the fingerprint's always among them); `probes`: what rides along with the facts."""

    topology: str
    profile: str
    families: tuple[str, ...]
    checks: tuple[str, ...]
    hosts: tuple[str, ...]
    collect: frozenset[str]
    options: ProbeOptions
    bursts: tuple[Burst, ...]
    probes: FactsBurstProbes = field(compare=False, repr=False)

    @property
    def probing(self) -> bool:
        """Whether any active probe runs after the facts."""
        return self.options.ping or self.options.bandwidth or self.options.nccl

    def work(self) -> ConnectionWork:
        """What each host runs on its connection around its facts."""
        return self.probes.work()

    def facts_phase(self) -> str:
        """The name of the facts burst's phase (`--timings`); with the facts read behind the
        bandwidth rounds, `before the rounds: …` (the rest is `facts behind the rounds`)."""
        servers = self.probes.schedule is not None and not self.options.counters
        if self.probes.behind:
            return ("before the rounds: " + ("pings, " if self.options.ping else "")
                    + ("bandwidth servers, " if servers else "") + "RDMA map")
        return ("facts" + (", pings" if self.options.ping else "")
                + (", bandwidth servers" if self.probes.schedule is not None else ""))

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {"schema": SCHEMA, "topology": self.topology, "profile": self.profile,
                "families": list(self.families), "checks": list(self.checks),
                "hosts": list(self.hosts), "collect": sorted(self.collect),
                "probes": {"ping": o.ping, "bandwidth": o.bandwidth, "nccl": o.nccl,
                           "counters_window": o.counters, "duration_s": o.duration_s,
                           "rate": o.rate},
                "bursts": [b.to_dict() for b in self.bursts]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_text(self) -> str:
        """The plan for a reader: one block per burst, one entry per step: its hosts, the
        families it is for, how much it does."""
        out = [f"validation plan: {self.topology} (profile {self.profile}), "
               f"{len(self.checks)} checks in {len(self.families)} "
               f"{'family' if len(self.families) == 1 else 'families'}",
               *_wrap("families: ", ", ".join(self.families), ""),
               *_wrap("hosts: ", ", ".join(self.hosts), ""),
               "each burst starts when the one before is done on every host; no host is "
               "connected to before burst 1"]
        for i, burst in enumerate(self.bursts, 1):
            out += ["", f"burst {i}: {burst.name}"]
            for step in burst.steps:
                out += _wrap("- ", step.what, "  ")
                if step.hosts:
                    out += _wrap("on:  ", ", ".join(step.hosts), "    ")
                out += _wrap("for: ", ", ".join(step.families), "    ")
                if step.detail:
                    out += _wrap("", step.detail, "    ", hang=2)
                out += [f"    {line}" for line in step.lines]
        return "\n".join(out) + "\n"


def _wrap(label: str, text: str, indent: str, hang: int = 0) -> list[str]:
    return textwrap.wrap(text, width=100, initial_indent=indent + label,
                         subsequent_indent=indent + " " * (len(label) + hang),
                         break_on_hyphens=False) or [indent + label.rstrip()]


def probe_options(needs: Iterable[Needs], duration_s: float | None = None,
                  rate: str | None = None, hosts: frozenset[str] | None = None
                  ) -> ProbeOptions:
    """Which probes the families' needs call for (a counters window brings its probes)."""
    wanted = list(needs)
    probes = {p for n in wanted for p in n.probes}
    return ProbeOptions(ping=PING in probes, bandwidth=BANDWIDTH in probes,
                        nccl=NCCL in probes, duration_s=duration_s, rate=rate, hosts=hosts,
                        counters=any(n.window for n in wanted))


def _for(needs: Sequence[Needs], probe: str) -> tuple[str, ...]:
    return tuple(n.family for n in needs if probe in n.probes)


def _spark_rows(intent: Intent, sparks: Sequence[str], collect: frozenset[str],
                which: Literal["all", "first", "rest"]) -> dict[str, tuple[str, ...]]:
    """Each Spark's facts rows: `all`, those read before the rounds (`first`, the
    `PROBE_ROWS`) or those read behind them (`rest`, the beacon among them)."""
    if which == "all":
        return {h: facts_batch_rows(intent, h, collect) for h in sparks}
    first = which == "first"
    return {h: tuple(r for r in facts_batch_rows(intent, h, collect, beacon=True)
                     if (r in PROBE_ROWS) == first) for h in sparks}


def _rows_step(what: str, rows: dict[str, tuple[str, ...]],
               families: tuple[str, ...]) -> Step:
    shown = sorted({", ".join(r) for r in rows.values()})
    return Step(what, tuple(rows), families,
                f"rows: {shown[0]}" if len(shown) == 1 else "rows per host:",
                () if len(shown) == 1 else tuple(f"{h}: {', '.join(r)}"
                                                 for h, r in rows.items()))


def _facts_steps(intent: Intent, needs: Sequence[Needs], hosts: Sequence[str],
                 collect: frozenset[str], behind: bool = False) -> list[Step]:
    """The facts' steps, in the burst that reads them (`behind`: the rest of the facts,
    read behind the bandwidth rounds)."""
    also = tuple(sorted(collect - {n.family for n in needs}))  # the fingerprint's readers
    sparks = [h for h in hosts if intent.hosts[h].role == "spark"]
    switch = [h for h in hosts if intent.hosts[h].role == "switch"]
    steps = []
    if sparks:
        families = (*(n.family for n in needs if n.spark), *also)
        what = ("spark facts, the rest: one batch per Spark on a second channel, one command "
                "at a time at the lowest priority, from when every client of the first round "
                "is connected to its server" if behind else
                "spark facts: one batch per Spark, in one burst with the scripts below")
        steps.append(_rows_step(what, _spark_rows(intent, sparks, collect,
                                                  "rest" if behind else "all"), families))
    if switch:
        steps.append(Step("switch facts: one API session", tuple(switch),
                          (*(n.family for n in needs if n.switch), *also),
                          "its menus in one round trip, then every lane's state and LLDP"))
    if sparks:
        steps.append(Step("LLDP: each Spark announces its beacon behind the first round, "
                          "both ends' neighbours read" if behind else
                          "LLDP: each Spark announces a beacon, both ends' neighbours read",
                          tuple(hosts), (*(n.family for n in needs if n.lldp), *also)))
    return steps


def _alongside_steps(probes: FactsBurstProbes, needs: Sequence[Needs], pings: bool = True,
                     setup: bool = True, where: str = "in the facts burst") -> list[Step]:
    """The probes' scripts beside the facts: the pings; the `setup` (servers, nccl-tests
    search), `where` they run."""
    steps = []
    if probes.pings and pings:
        count = sum(len(p) for p in probes.pings.values())
        steps.append(Step(f"ping matrix, {where}", tuple(sorted(probes.pings)),
                          _for(needs, PING), f"{count} DF pings at the fabric MTU",
                          tuple(f"{h}: {len(p)} pings" for h, p in sorted(probes.pings.items()))))
    if probes.schedule is not None and setup:
        serving = sorted({t.server for t in probes.schedule.tests})
        steps.append(Step(f"bandwidth servers start, {where}", tuple(serving),
                          _for(needs, BANDWIDTH),
                          f"iperf3 servers for {len(probes.schedule.tests)} tests, alive "
                          f"{probes.life_s:g} s"))
    if probes.opts.nccl and probes.sparks and setup:
        steps.append(Step(f"nccl-tests search, {where}", probes.sparks,
                          _for(needs, NCCL)))
    return steps


def _after_bursts(probes: FactsBurstProbes, needs: Sequence[Needs],
                  window: tuple[str, ...], hosts: tuple[str, ...],
                  behind: Sequence[Step] = ()) -> list[Burst]:
    bursts = []
    schedule = probes.schedule
    if schedule is not None:
        test_s = schedule.test_s
        lines = tuple(f"round {i}: " + ", ".join(f"{t.client}<->{t.server}" for t in r)
                      for i, r in enumerate(schedule.rounds, 1))
        tools = ("iperf3, then ib_write_bw per twin and both twins where the Sparks have "
                 "RoCE GIDs" if probes.intent.profile.rdma else "iperf3")
        bursts.append(Burst("bandwidth rounds, once every ping is back" + (
            ", the rest of the facts behind them" if behind else ""), (Step(
                f"{len(schedule.tests)} tests, both ways, in {len(schedule.rounds)} rounds",
                tuple(sorted({h for t in schedule.tests for h in (t.client, t.server)})),
                _for(needs, BANDWIDTH),
                f"{test_s:g} s per tool (up to {MAX_TOOLS_PER_TEST} tools a test: {tools})",
                lines), *behind)))
    if probes.opts.nccl and probes.sparks:
        bursts.append(Burst("nccl-tests", (Step(
            "each nccl-test found on every Spark, from rank 0 (the first Spark that answered)",
            probes.sparks, _for(needs, NCCL)),)))
    if probes.opts.counters:
        bursts.append(Burst("counters after", (Step("counters snapshot", hosts, window),)))
    return bursts


def build_plan(intent: Intent, needs: Sequence[Needs], checks: Sequence[str],
               hosts: Sequence[str], collect: frozenset[str], options: ProbeOptions
               ) -> ValidationPlan:
    """The plan of a validation judging `checks` (of the families whose `needs` are given) on
    `hosts` (the Sparks and the switch read), collecting `collect`, probing as `options`.
    With bandwidth rounds, the facts but the rows the probes need first are read behind
    them (`fabric.collect.gather`, `ConnectionWork.behind`)."""
    hosts = tuple(hosts)
    sparks = sorted(h for h in hosts if intent.hosts[h].role == "spark")
    probes = FactsBurstProbes(intent, options, sparks)
    window = tuple(n.family for n in needs if n.window)
    behind = probes.behind
    bursts: list[Burst] = []
    if options.counters:  # the servers and the search ride with the snapshot (`work`)
        bursts.append(Burst("connect, counters before", (Step(
            "counters snapshot, on each host as soon as it is connected", hosts, window),
            *_alongside_steps(probes, needs, pings=False, where="with the snapshot"))))
    if behind:
        first = _spark_rows(intent, sparks, collect, "first")
        steps = ([_rows_step("spark facts the probes need first: one batch per Spark", first,
                             tuple(n.family for n in needs if n.spark))]
                 if sparks else [])
        steps += _alongside_steps(probes, needs, setup=not options.counters,
                                  where="in the burst")
        bursts.append(Burst("before the rounds" if options.counters
                            else "connect, before the rounds", tuple(steps)))
    else:
        facts = _facts_steps(intent, needs, hosts, collect) + _alongside_steps(
            probes, needs, setup=not options.counters)
        bursts.append(Burst("facts" if options.counters else "connect, facts", tuple(facts)))
    bursts += _after_bursts(probes, needs, window, hosts,
                            _facts_steps(intent, needs, hosts, collect, behind=True)
                            if behind else [])
    bursts.append(Burst("checks, on the facts (no host touched)", (Step(
        f"{len(checks)} checks", (), tuple(n.family for n in needs), ", ".join(checks)),)))
    return ValidationPlan(intent.name, intent.profile.name,
                          tuple(n.family for n in needs), tuple(checks), hosts, collect,
                          options, tuple(bursts), probes)
