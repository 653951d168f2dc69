"""Helpers shared by the check families: collecting results and reaching host facts."""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from fabric.facts import Facts, LaneFact, SparkFacts, SwitchFacts
from fabric.intent.model import Intent, InterfaceIntent, LanePlan, SwitchPlan
from fabric.report.model import CheckResult, Status


class Findings:
    """The results of one check, and the host facts it may read (errors reported once)."""

    def __init__(self, check: str, facts: Facts) -> None:
        self.check = check
        self.facts = facts
        self.results: list[CheckResult] = []
        self._errored: set[str] = set()

    def add(self, status: Status, message: str, *, host: str | None = None,
            link: str | None = None, expected: Any = None, actual: Any = None,
            hint: str = "") -> None:
        self.results.append(CheckResult(self.check, status, host, link, expected, actual,
                                        message, hint))

    def ok(self, message: str, **kw: Any) -> None:
        self.add("pass", message, **kw)

    def fail(self, message: str, **kw: Any) -> None:
        self.add("fail", message, **kw)

    def warn(self, message: str, **kw: Any) -> None:
        self.add("warn", message, **kw)

    def skip(self, message: str, **kw: Any) -> None:
        self.add("skip", message, **kw)

    def spark(self, host: str, link: str | None = None) -> SparkFacts | None:
        """The host's facts, or None after an `error` result (once per host) saying why."""
        sf = self.facts.sparks.get(host)
        if sf is None:
            self._error_once(host, link)
        return sf

    def sparks(self, intent: Intent) -> Iterator[tuple[str, SparkFacts]]:
        """Each Spark of the intent with its facts; unreachable ones get an `error` result."""
        for h in intent.sparks:
            sf = self.spark(h.name)
            if sf is not None:
                yield h.name, sf

    def twins(self, intent: Intent) -> Iterator[tuple[InterfaceIntent, SparkFacts]]:
        """Each planned twin with its host's facts; unreachable hosts get an `error` result."""
        for intended in intent.interfaces():
            sf = self.spark(intended.host, intended.link_id)
            if sf is not None:
                yield intended, sf

    def switch(self, host: str) -> SwitchFacts | None:
        sw = self.facts.switch
        if sw is None or sw.host != host:
            self._error_once(host, None)
            return None
        return sw

    def _error_once(self, host: str, link: str | None) -> None:
        if host in self._errored:
            return
        self._errored.add(host)
        reason = self.facts.errors.get(host, "no facts were collected from it")
        self.add("error", f"{host}: {reason}", host=host, link=link,
                 hint=f"make {host} reachable (ssh/API, credentials) and collect facts again")


def cabled_lanes(intent: Intent, out: Findings
                 ) -> Iterator[tuple[SwitchPlan, LanePlan, LaneFact | None]]:
    """Each cabled lane of the switch with its fact (None if the switch does not list it);
    skips (no switch) or errors (switch unreachable) once, then yields nothing."""
    if intent.switch is None:
        out.skip(f"{intent.name} has no switch")
        return
    intended = intent.switch
    sw = out.switch(intended.host)
    if sw is None:
        return
    for lane in intended.lanes:
        if lane.link_id is not None:
            yield intended, lane, sw.lanes.get(lane.name)


def fabric_netdevs(intent: Intent, host: str) -> dict[str, tuple[str, int]]:
    """Every fabric twin netdev of a Spark (cabled or not) -> (port, twin index)."""
    h = intent.hosts[host]
    return {t.netdev: (port, i) for port, twins in h.ports.items() for i, t in enumerate(twins)}


def link_of_netdev(intent: Intent, host: str, netdev: str) -> str | None:
    for intended in intent.interfaces(host):
        if intended.netdev == netdev:
            return intended.link_id
    return None


def where(intended: InterfaceIntent) -> str:
    """`spark01 enp1s0f0np0 (p0 twin A)`."""
    return f"{intended.host} {intended.netdev} ({intended.port} twin {'AB'[intended.twin]})"


def spark_hosts(intent: Intent) -> list[str]:
    return [h.name for h in intent.sparks]


def reference(values: Iterable[tuple[str, Any]]) -> Any:
    """The most common value; on a tie, the value of the first host (the reference node)."""
    items = list(values)
    counts = Counter(v for _, v in items)
    top = max(counts.values())
    for _, v in items:
        if counts[v] == top:
            return v
    return None


def ipv4(address: str) -> ipaddress.IPv4Interface | None:
    try:
        return ipaddress.IPv4Interface(address)
    except ValueError:
        return None
