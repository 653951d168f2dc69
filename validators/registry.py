"""The check registry: `@check("family.name")` turns a judging function into a CheckFn.

A judging function takes `(intent, facts, out)` and adds results to `out`; the decorator
gives it the CheckFn shape `(intent, facts) -> list[CheckResult]`, so every result carries the
registered name and the registry cannot drift from the modules.

`needs("family", ...)`, next to a family's checks, declares what the family judges, so what a
validation must collect and probe for it (`Needs`); `fabric.validate` plans a run from these.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from validators.judge import Findings

CheckFn = Callable[[Intent, Facts], list[CheckResult]]
JudgeFn = Callable[[Intent, Facts, Findings], None]

#: Check families, in the order the operators check things (DOMAIN.md).
FAMILIES: tuple[str, ...] = ("link", "mtu", "addr", "route", "gid", "cabling", "bw", "counters",
                             "version", "time", "forward", "switch", "qos", "nccl", "host")

REGISTRY: dict[str, CheckFn] = {}

#: The active probes a family can judge (run by `fabric.probes`, judged as facts): the ping
#: matrix, the bandwidth rounds, nccl-tests.
PING, BANDWIDTH, NCCL = "ping", "bandwidth", "nccl"
PROBES: tuple[str, ...] = (PING, BANDWIDTH, NCCL)


@dataclass(frozen=True)
class Needs:
    """What a check family judges, so what a validation collects and probes for it.

    `spark` / `switch`: facts read from the Sparks / the switch (the rows `fabric.collect` tags
    with the family); `lldp`: the LLDP neighbours both ends heard (each Spark announces a
    beacon); `probes`: the active probes whose facts it judges (`PROBES`); `window`: every
    host's counters read just before and just after those probes (a counters window)."""

    family: str
    spark: bool = False
    switch: bool = False
    lldp: bool = False
    probes: tuple[str, ...] = ()
    window: bool = False

    @property
    def facts(self) -> bool:
        """Whether the family judges collected facts (not only what probes measured)."""
        return self.spark or self.switch or self.lldp


#: Each family's needs, declared by its module (`needs`).
NEEDS: dict[str, Needs] = {}


def needs(family: str, *, spark: bool = False, switch: bool = False, lldp: bool = False,
          probes: tuple[str, ...] = (), window: bool = False) -> Needs:
    """Declare what `family` needs (once per family, in its module, next to its checks)."""
    if family not in FAMILIES:
        raise ValueError(f"needs {family!r}: the family must be one of {', '.join(FAMILIES)}")
    unknown = sorted(set(probes) - set(PROBES))
    if unknown:
        raise ValueError(f"needs {family!r}: unknown probes {', '.join(unknown)}")
    if window and not probes:
        raise ValueError(f"needs {family!r}: a counters window needs probes to measure")
    if family in NEEDS:
        raise ValueError(f"needs of {family!r} are declared twice")
    declared = Needs(family, spark, switch, lldp, tuple(probes), window)
    NEEDS[family] = declared
    return declared


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
            out = Findings(name, facts)
            fn(intent, facts, out)
            return out.results

        REGISTRY[name] = run
        return run

    return register
