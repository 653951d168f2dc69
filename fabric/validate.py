"""`fabric validate` as a function: facts -> active probes -> checks -> Report.

Probes run only for the families that judge them: mtu (ping matrix) and bw (bandwidth).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from rich.progress import Progress

import validators
from fabric.collect import collect_facts
from fabric.facts import Facts
from fabric.nornir_setup import make_nornir
from fabric.probes.run import ProbeOptions, run_probes
from fabric.report.model import Report
from fabric.target import Target

#: Which families need which probe.
PING_FAMILIES = frozenset({"mtu"})
BANDWIDTH_FAMILIES = frozenset({"bw"})


def selected_families(only: set[str] | None) -> list[str]:
    """Families of the selected checks (InputError, exit 2, on an unknown name)."""
    names = validators.select(only)
    return list(dict.fromkeys(n.split(".", 1)[0] for n in names))


def run_validation(target: Target, only: set[str] | None = None,
                   progress: Progress | None = None, duration_s: float | None = None,
                   rate: str | None = None,
                   say: Callable[[str], None] | None = None) -> tuple[Report, Facts]:
    """Validate the target: collect facts, run the probes the selected checks judge, check."""
    families = selected_families(only)
    started = datetime.now(UTC)
    t0 = time.monotonic()
    facts = collect_facts(target, progress=progress)
    opts = ProbeOptions(ping=bool(PING_FAMILIES & set(families)),
                        bandwidth=bool(BANDWIDTH_FAMILIES & set(families)),
                        duration_s=duration_s, rate=rate)
    if (opts.ping or opts.bandwidth) and facts.sparks:
        sparks = sorted(facts.sparks)
        nr = make_nornir(target, sparks, workers=max(8, len(sparks)))
        try:
            facts = run_probes(nr, target.intent, facts, opts, progress, say)
        finally:
            nr.close_connections()
    results = validators.run_checks(target.intent, facts, only)
    report = Report.build(topology=target.intent.name, intent_hash=target.intent.intent_hash,
                          started=started.isoformat(timespec="seconds"),
                          duration_s=time.monotonic() - t0, results=results, lab=target.lab,
                          families=families, schedule=facts.schedule,
                          facts_errors=facts.errors)
    return report, facts
