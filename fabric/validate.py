"""`fabric validate` as a function: a plan -> facts -> active probes -> checks -> Report.

The run is planned first, touching no host (`plan_validation`, `fabric.probes.validation_plan`):
each check family declares what it needs next to its checks (`validators.registry.Needs`), and
the plan says which collections and probes run, on which hosts, in which bursts. Probes run
only for the families that judge them: mtu (ping matrix), bw (bandwidth) and
nccl (nccl-tests). counters judges counter deltas over the probes' traffic, so selecting it
(`--only counters` too) runs the ping matrix and the bandwidth rounds between a snapshot of
every host's counters before and one after; an idle window would prove nothing about errors
or drops under load. `hosts` narrows everything to those hosts and the cables among them (see
`Scope`).

A host whose facts could not be read is ONE `host.reachable` error with the reason, not an
error per check: the checks' own "no facts" errors about it are folded into that row (the
report stays failed; the CLI exits 3 when nothing else failed, see `report.model.exit_code`).
The report also carries the fingerprint of the fabric it judged (`fabric.fingerprint`).

Collection is narrowed to what the selected families judge (`collect_families`: the rows of
`spark_commands` and the switch reads those families name), always with the fingerprint's
inputs, so a `--only` report still carries the whole fingerprint (and `fabric gate` opens only
on a report that judged every check). The ping matrix, the bandwidth servers' start-up and
the nccl-tests search run in the same burst per Spark as the facts
(`fabric.probes.facts_burst.FactsBurstProbes`); with counters judged, after every host's "before"
snapshot. The Spark sessions are exec-only (`fabric.remote.transport`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import validators
from fabric.collect.gather import ROLES, finish, gather_facts, settle_behind, start_behind
from fabric.devices.spark.commands import FINGERPRINT
from fabric.errors import InputError
from fabric.facts import Facts
from fabric.fingerprint import fingerprint
from fabric.intent.model import Intent
from fabric.probes.counters import snapshot_reader
from fabric.probes.run import run_probes
from fabric.probes.validation_plan import ValidationPlan, build_plan, probe_options
from fabric.redact import redact
from fabric.remote.nornir_setup import make_nornir
from fabric.report.model import REACHABLE_CHECK, CheckResult, Report
from fabric.target import Target

if TYPE_CHECKING:
    from rich.progress import Progress

class Phases:
    """Where a run's wall time went: each phase from the end of the previous one, with the
    CPU this process spent in it (`fabric validate --timings FILE`, `bench/`)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.last = self.t0
        self.cpu = time.process_time()
        self.rows: list[tuple[str, float, float, float]] = []

    def mark(self, name: str) -> None:
        """The phase `name` ended now (it began where the previous one ended)."""
        now, cpu = time.monotonic(), time.process_time()
        self.rows.append((name, self.last - self.t0, now - self.t0, cpu - self.cpu))
        self.last, self.cpu = now, cpu

    def to_dict(self) -> dict[str, Any]:
        return {"phases": [{"phase": name, "start_s": round(a, 3), "end_s": round(b, 3),
                            "s": round(b - a, 3), "cpu_s": round(c, 3)}
                           for name, a, b, c in self.rows],
                "total_s": round(self.last - self.t0, 3)}


def selected_families(only: set[str] | None) -> list[str]:
    """Families of the selected checks (InputError, exit 2, on an unknown name)."""
    names = validators.select(only)
    return list(dict.fromkeys(n.split(".", 1)[0] for n in names))


def collect_families(families: Iterable[str]) -> frozenset[str]:
    """What to collect for a run judging `families`: the facts of those that declare facts
    (`Needs.facts`: every family does) and the fingerprint's."""
    return frozenset(n.family for n in validators.needs_of(families) if n.facts) | {FINGERPRINT}


@dataclass(frozen=True)
class Scope:
    """What a `--hosts` run covers: the named hosts, the cables among them (a Spark's cable
    to the switch counts: its lane is judged), and the hosts whose facts are read for that
    (the named ones, plus the switch for those lanes)."""

    hosts: frozenset[str]
    links: frozenset[str]
    collect: tuple[str, ...]

    def covers(self, result: CheckResult) -> bool:
        """A result about an in-scope cable, or about a named host (or about no host)."""
        if result.link is not None:
            return result.link in self.links
        return result.host is None or result.host in self.hosts


def host_scope(intent: Intent, hosts: Iterable[str]) -> Scope:
    """The scope of `--hosts`; InputError (exit 2) naming every host the topology lacks."""
    wanted = frozenset(hosts)
    known = {h for h in intent.cabled if intent.hosts[h].role in ROLES}
    unknown = sorted(wanted - known)
    if unknown:
        raise InputError(f"--hosts: not in topology {intent.name}: {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")
    if not wanted:
        raise InputError("--hosts: name at least one host")
    switch = intent.switch.host if intent.switch is not None else None
    reach = wanted | ({switch} if switch else set())
    links = frozenset(lk.id for lk in intent.links
                      if {lk.a.host, lk.b.host} <= reach and {lk.a.host, lk.b.host} & wanted)
    ends = {e.host for lk in intent.links if lk.id in links for e in lk.ends()}
    return Scope(wanted, links, tuple(sorted(wanted | ends)))


def fold_unreachable(results: Iterable[CheckResult], errors: dict[str, str]) -> list[CheckResult]:
    """One `host.reachable` error per host that could not be read (with the reason), in place
    of the `error` result every check gives for a host without facts."""
    rows = [CheckResult(REACHABLE_CHECK, "error", host=host, expected="reachable",
                        actual="unreachable",
                        message=f"{host} could not be read: {reason}; none of its checks ran",
                        hint=f"make {host} reachable (ssh/API, credentials) and validate again")
            for host, reason in sorted(errors.items())]
    return rows + [r for r in results if not (r.status == "error" and r.host in errors)]


def plan_validation(target: Target, only: set[str] | None = None,
                    hosts: Iterable[str] | None = None, duration_s: float | None = None,
                    rate: str | None = None, fingerprinted: bool = True
                    ) -> tuple[ValidationPlan, Scope | None]:
    """The plan of validating the target (or only `hosts` and their cables), built from the
    selected families' needs without touching a host; InputError (exit 2) on an unknown
    check, family or host. Not `fingerprinted` (`fabric doctor`): only what the families
    judge is read (no fingerprint, so no LLDP wait), on the hosts they judge."""
    families = selected_families(only)
    intent = target.intent
    scope = None if hosts is None else host_scope(intent, hosts)
    needs = validators.needs_of(families)
    wanted = list(scope.collect) if scope is not None else sorted(
        h for h in intent.cabled if intent.hosts[h].role in ROLES)
    collect = collect_families(families)
    if not fingerprinted:
        collect -= {FINGERPRINT}
        if not any(n.switch or n.lldp for n in needs):
            wanted = [h for h in wanted if intent.hosts[h].role == "spark"]
    opts = probe_options(needs, duration_s, rate, None if scope is None else scope.hosts)
    plan = build_plan(intent, needs, validators.select(only), wanted, collect, opts)
    return plan, scope


def _run_plan(target: Target, plan: ValidationPlan, scope: Scope | None,
              progress: Progress | None, say: Callable[[str], None] | None,
              mark: Callable[[str], None] | None, t0: float) -> Facts:
    """Collect and probe as `plan` says: one Nornir, so one SSH session per Spark serves the
    facts and every probe of the run."""
    intent = target.intent
    wanted = list(scope.collect) if scope is not None else list(plan.hosts)
    nr = make_nornir(target, wanted, workers=max(8, len(intent.cabled)))
    try:
        work = plan.work()
        facts, collected = gather_facts(target, hosts=wanted, progress=progress, nornir=nr,
                                        families=plan.collect, work=work, on_opened=mark)
        if mark is not None:
            mark(plan.facts_phase())

        def rest(probed: Facts) -> Facts:
            return finish(target, probed, collected) if work.behind else probed

        if plan.probing and facts.sparks:
            answered = set(facts.sparks)
            # every host that answered, the switch too (its facts may still be read behind):
            # its lanes' counters are read on its open API connection
            snapshot = snapshot_reader(nr, intent, facts, collected) \
                if plan.options.counters else None
            early = plan.probes.results(facts, collected, progress)
            facts = run_probes(nr.filter(filter_func=lambda h: h.name in answered),
                               intent, facts, plan.options, progress, say, snapshot,
                               early=early, started=t0, mark=mark, rest=rest,
                               behind=lambda: start_behind(collected),
                               settle=lambda: settle_behind(collected))
        else:
            facts = rest(facts)
    finally:
        nr.close_connections()
    return facts


def run_validation(target: Target, only: set[str] | None = None,
                   progress: Progress | None = None, duration_s: float | None = None,
                   rate: str | None = None, say: Callable[[str], None] | None = None,
                   hosts: Iterable[str] | None = None, phases: Phases | None = None,
                   fingerprinted: bool = True) -> tuple[Report, Facts]:
    """Validate the target (or only `hosts` and their cables): plan, collect facts, run the
    probes the selected checks judge, check. `phases` records where the time went; not
    `fingerprinted`: the report carries no fingerprint (`plan_validation`)."""
    mark = phases.mark if phases is not None else None
    plan, scope = plan_validation(target, only, hosts, duration_s, rate, fingerprinted)
    families = list(plan.families)
    started = datetime.now(UTC)
    t0 = time.monotonic()
    facts = _run_plan(target, plan, scope, progress, say, mark, t0)
    results = validators.run_checks(target.intent, facts, only)
    if mark is not None:
        mark("checks")
    if scope is not None:
        results = [r for r in results if scope.covers(r)]
    results = fold_unreachable(results, facts.errors)
    reach = REACHABLE_CHECK.split(".", 1)[0]
    if facts.errors and reach not in families:  # every result's family is listed
        families = [*families, reach]
    report = Report.build(topology=target.intent.name, intent_hash=target.intent.intent_hash,
                          started=started.isoformat(timespec="seconds"),
                          duration_s=time.monotonic() - t0, results=results, lab=target.lab,
                          families=families, schedule=facts.schedule,
                          facts_errors=facts.errors,
                          fingerprint=fingerprint(target.intent, facts) if fingerprinted
                          else None, checks=list(plan.checks))
    secrets = target.credentials.secrets()
    return redact(report, secrets), redact(facts, secrets)
