"""Check families: pure functions of intent and facts, registered by name.

One module per family (link, mtu, addr + route, gid, cabling, bw, counters, version, time,
forward, switch, qos, nccl, host). `run_checks` runs them all, or those named by `only` (families or
checks). Each family module declares its `Needs` next to its checks (`needs_of`).
"""

from __future__ import annotations

from collections.abc import Iterable

from fabric.errors import InputError
from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from validators import (  # noqa: F401  (importing a family module registers its checks)
    addr,
    bw,
    cabling,
    counters,
    forward,
    gid,
    host,
    link,
    mtu,
    nccl,
    qos,
    switch,
    time,
    version,
)
from validators.registry import FAMILIES, NEEDS, PROBES, REGISTRY, CheckFn, Needs, check

__all__ = ["FAMILIES", "NEEDS", "PROBES", "REGISTRY", "CheckFn", "Needs", "check", "needs_of",
           "run_checks", "select"]


def select(only: Iterable[str] | None) -> list[str]:
    """Registered check names matching `only` (family or check names); all when None."""
    order = sorted(REGISTRY, key=lambda n: FAMILIES.index(n.split(".", 1)[0]))
    if only is None:
        return order
    wanted = set(only)
    unknown = sorted(w for w in wanted if w not in REGISTRY and w not in FAMILIES)
    if unknown:
        raise InputError(f"unknown check or family {', '.join(unknown)}; known families: "
                         f"{', '.join(FAMILIES)}; checks: {', '.join(REGISTRY)}")
    return [n for n in order if n in wanted or n.split(".", 1)[0] in wanted]


def needs_of(families: Iterable[str]) -> list[Needs]:
    """What `families` need collected and probed, in family order."""
    wanted = set(families)
    return [NEEDS[f] for f in FAMILIES if f in wanted]


def run_checks(intent: Intent, facts: Facts, only: set[str] | None = None) -> list[CheckResult]:
    """Run the selected checks; a check that crashes gives an `error` result, not a traceback."""
    results: list[CheckResult] = []
    for name in select(only):
        try:
            results.extend(REGISTRY[name](intent, facts))
        except Exception as exc:  # a bug in one check must not hide the others' results
            results.append(CheckResult(name, "error", message=f"check crashed: "
                                       f"{type(exc).__name__}: {exc}",
                                       hint="a bug in the check; please report it with the "
                                       "facts JSON (fabric facts --json)"))
    return results
