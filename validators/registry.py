"""The check registry: `@check("family.name")` turns a judging function into a CheckFn.

A judging function takes `(intent, facts, out)` and adds results to `out`; the decorator
gives it the CheckFn shape `(intent, facts) -> list[CheckResult]`, so every result carries the
registered name and the registry cannot drift from the modules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from validators.judge import Out

CheckFn = Callable[[Intent, Facts], list[CheckResult]]
JudgeFn = Callable[[Intent, Facts, Out], None]

#: Check families, in the order the operators check things (DOMAIN.md).
FAMILIES: tuple[str, ...] = ("link", "mtu", "addr", "route", "gid", "cabling", "bw", "counters",
                             "version", "time", "forward", "switch", "qos", "nccl")

REGISTRY: dict[str, CheckFn] = {}


def check(name: str) -> Callable[[JudgeFn], CheckFn]:
    """Register a judging function under `name` (its first dotted part is a family)."""
    family = name.split(".", 1)[0]
    if family not in FAMILIES or "." not in name:
        raise ValueError(f"check {name!r}: the family must be one of {', '.join(FAMILIES)}")

    def register(fn: JudgeFn) -> CheckFn:
        if name in REGISTRY:
            raise ValueError(f"check {name!r} is registered twice")

        @functools.wraps(fn)
        def run(intent: Intent, facts: Facts) -> list[CheckResult]:
            out = Out(name, facts)
            fn(intent, facts, out)
            return out.results

        REGISTRY[name] = run
        return run

    return register
