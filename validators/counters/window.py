"""How a counters window is judged: a delta per counter against a limit, per port.

A *signal* ("CRC errors") is read from the first of its counter groups that the port reports;
a signal no source reports is never judged as zero but named in a skip (`judge`). `Ports`
walks every cabled twin and switch lane of a window; a host without both snapshots gets one
`error` result saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fabric.facts import (
    ETHERNET,
    ETHTOOL,
    INTERFACE,
    IP,
    RDMA,
    CounterSnapshot,
    CounterWindow,
    Facts,
    PortCounters,
)
from fabric.intent.model import Intent
from fabric.report.model import Status
from validators.judge import Findings, where


@dataclass(frozen=True)
class Counter:
    """One counter of one source; `per`: the packet counters (first present) a drop is
    measured against."""

    source: str
    name: str
    per: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.source}:{self.name}"


@dataclass(frozen=True)
class Signal:
    """Something a check judges on a port, read from the first of its groups that the port
    reports (every counter of that group that is present is judged)."""

    label: str
    groups: tuple[tuple[Counter, ...], ...]


def signal(label: str, *groups: tuple[Counter, ...]) -> Signal:
    """A signal read from the first of `groups` that the port reports."""
    return Signal(label, groups)


def group(source: str, *names: str, per: tuple[tuple[str, str], ...] = ()) -> tuple[Counter, ...]:
    """Counters `names` of `source`, measured against `per` (drops)."""
    return tuple(Counter(source, n, per) for n in names)




@dataclass(frozen=True)
class Limit:
    """How a check turns a delta into a verdict: an absolute maximum or a drop ratio."""

    max_count: int = 0
    max_ratio: float | None = None  # set: the limit is this fraction of the packet delta
    floor: int = 0  # with a ratio: never less than this many (a small sample means nothing)
    over: Status = "fail"  # the status of a delta above the limit


@dataclass
class Verdict:
    """What one check found on one port."""

    judged: dict[str, int] = field(default_factory=dict)  # counter key -> delta
    limits: dict[str, float] = field(default_factory=dict)  # counter key -> allowed
    over: list[str] = field(default_factory=list)  # "carrier_changes +2 (max 0)"
    unavailable: dict[str, list[str]] = field(default_factory=dict)  # why -> signal labels


def _value(port: PortCounters, source: str, name: str) -> int | None:
    return port.values.get(source, {}).get(name)


def _delta(before: PortCounters, after: PortCounters, source: str, name: str) -> int | None:
    a, b = _value(before, source, name), _value(after, source, name)
    return None if a is None or b is None else b - a


#: How a source is named in a message.
SOURCE_NAMES = {IP: "`ip -s -s -j link`", ETHTOOL: "`ethtool -S`", RDMA: "RDMA hw_counters",
                INTERFACE: "/interface print stats", ETHERNET: "/interface/ethernet print stats"}


def _why(before: PortCounters, after: PortCounters, signal: Signal) -> str:
    """Why none of the signal's counters could be read (the sources' reasons)."""
    reasons: list[str] = []
    for group in signal.groups:
        for source in dict.fromkeys(c.source for c in group):
            why = after.unavailable.get(source) or before.unavailable.get(source)
            if why is None:
                names = ", ".join(c.name for c in group if c.source == source)
                why = f"{SOURCE_NAMES.get(source, source)} does not report {names}"
            if why not in reasons:
                reasons.append(why)
    return "; ".join(reasons) or "no counters defined"


def judge_port(before: PortCounters, after: PortCounters, signals: Iterable[Signal],
               limit: Limit) -> Verdict:
    """The deltas of every signal's first reported group against the limit."""
    verdict = Verdict()
    for signal in signals:
        group = next((g for g in signal.groups
                      if any(_delta(before, after, c.source, c.name) is not None for c in g)),
                     None)
        if group is None:
            verdict.unavailable.setdefault(_why(before, after, signal), []).append(signal.label)
            continue
        for c in group:
            delta = _delta(before, after, c.source, c.name)
            if delta is None:
                continue
            allowed, floored = _allowed(before, after, c, limit)
            verdict.judged[c.key] = delta
            verdict.limits[c.key] = allowed
            if delta < 0:
                verdict.over.append(f"{c.name} went backwards by {-delta} (counter reset: "
                                    "netdev re-created or driver reloaded?)")
            elif delta > allowed:
                verdict.over.append(
                    f"{c.name} +{delta} ({_limit_text(c, limit, allowed, floored)})")
    return verdict


def _allowed(before: PortCounters, after: PortCounters, c: Counter, limit: Limit
             ) -> tuple[float, bool]:
    """The most the counter may grow, and whether the floor (not the ratio) set it."""
    if limit.max_ratio is None:
        return limit.max_count, False
    packets = next((d for s, n in c.per if (d := _delta(before, after, s, n)) is not None), 0)
    by_ratio = limit.max_ratio * max(packets, 0)
    return max(by_ratio, float(limit.floor)), by_ratio < limit.floor


def _limit_text(c: Counter, limit: Limit, allowed: float, floored: bool) -> str:
    if limit.max_ratio is None:
        return f"max {limit.max_count}"
    per = next((n for _, n in c.per), "packets")
    if floored:
        return (f"max {limit.floor}, the floor: {limit.max_ratio:g} of so few {per} "
                "means nothing")
    return f"max {limit.max_ratio:g} of {per} = {allowed:g}"


def _window_text(window: CounterWindow) -> str:
    probes = " + ".join(window.probes) if window.probes else "no probes"
    return f"during {probes} ({window.wall_s:.1f} s)"


@dataclass(frozen=True)
class Port:
    """A judged port: who, where, and the two readings (None: absent from that snapshot)."""

    host: str
    name: str  # netdev or lane
    link: str
    label: str  # "spark01 enp1s0f0np0 (p0 twin A)" / "crs804:qsfp56-dd-1-1 to spark01:p0"
    before: PortCounters | None
    after: PortCounters | None


class Ports:
    """The ports of a window: every cabled twin and lane whose host has both snapshots; a
    host without them gets one `error` result saying why."""

    def __init__(self, intent: Intent, out: Findings, window: CounterWindow) -> None:
        self.intent, self.out, self.window = intent, out, window
        self._errored: set[str] = set()

    def _pair(self, host: str, link: str | None) -> tuple[CounterSnapshot, CounterSnapshot] | None:
        before, after = self.window.before.get(host), self.window.after.get(host)
        failed = [s.error for s in (before, after) if s is not None and s.error]
        if before is not None and after is not None and not failed:
            return before, after
        if host not in self._errored:
            self._errored.add(host)
            why = failed[0] if failed else "no counter snapshot was taken"
            self.out.add("error", f"{host}: counters could not be read around the probes: "
                         f"{why}", host=host, link=link,
                         hint=f"check that {host} stays reachable during the run; read its "
                         "counters by hand (`ip -s -s link`, `ethtool -S`, /interface print "
                         "stats)")
        return None

    def twins(self) -> Iterator[Port]:
        for intended, _ in self.out.twins(self.intent):
            pair = self._pair(intended.host, intended.link_id)
            if pair is not None:
                yield Port(intended.host, intended.netdev, intended.link_id, where(intended),
                           pair[0].ports.get(intended.netdev), pair[1].ports.get(intended.netdev))

    def lanes(self) -> Iterator[Port]:
        sw = self.intent.switch
        if sw is None:
            return
        if self.out.switch(sw.host) is None:  # unreachable: an `error` result, once
            return
        for lane in sw.lanes:
            if lane.link_id is None:
                continue
            pair = self._pair(sw.host, lane.link_id)
            if pair is not None:
                yield Port(sw.host, lane.name, lane.link_id,
                           f"{sw.host}:{lane.name} to {lane.cabled_to}",
                           pair[0].ports.get(lane.name), pair[1].ports.get(lane.name))


def window_or_skip(facts: Facts, out: Findings) -> CounterWindow | None:
    if facts.counters is None:
        out.skip("no counter snapshots in the facts (`fabric validate` takes them around "
                 "the ping matrix and bandwidth rounds)")
    return facts.counters


def judge(out: Findings, port: Port, window: CounterWindow, what: str, signals: Iterable[Signal],
          limit: Limit, hint: str) -> None:
    """One result per port for the judged counters, plus a skip naming what was not judged."""
    where_ = f"{port.label} on {port.link}"
    if port.before is None or port.after is None:
        out.skip(f"{where_}: no counters in the "
                 f"{'before' if port.before is None else 'after'} snapshot", host=port.host,
                 link=port.link)
        return
    v = judge_port(port.before, port.after, signals, limit)
    if v.unavailable:
        missing = "; ".join(f"{', '.join(labels)}: {why}" for why, labels in v.unavailable.items())
        partly = "partly " if v.judged else ""
        out.skip(f"{where_}: {what} {partly}not judged, not available: {missing}",
                 host=port.host, link=port.link)
    if not v.judged:
        return
    span = _window_text(window)
    if v.over:
        out.add(limit.over, f"{where_}: {what} {span}: {'; '.join(v.over)}", host=port.host,
                link=port.link, expected=v.limits, actual=v.judged, hint=hint)
    else:
        shown = ", ".join(f"{k.split(':', 1)[1]} +{d}" for k, d in v.judged.items())
        said = f"{what} {span}" if limit.max_count >= 2**62 else f"no {what} {span}"
        out.ok(f"{where_}: {said} ({shown})", host=port.host, link=port.link,
               expected=None if limit.max_count >= 2**62 else v.limits, actual=v.judged)


def judge_ports(intent: Intent, facts: Facts, out: Findings, what: str,
                host: Iterable[Signal] | None, lane: Iterable[Signal] | None, limit: Limit,
                hint: str) -> None:
    window = window_or_skip(facts, out)
    if window is None:
        return
    ports = Ports(intent, out, window)
    for signals, found in ((host, ports.twins), (lane, ports.lanes)):
        if signals is None:
            continue
        for port in found():
            judge(out, port, window, what, signals, limit,
                  hint.format(port=port.label, link=port.link))
