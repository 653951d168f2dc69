"""counters: what each twin's and each switch lane's counters did while the probes ran.

The snapshots (`Facts.counters`) are taken just before and just after the active probes; every
check judges the deltas against the profile's `counters` thresholds. Which counters say what
is data (the tables below): a *signal* ("CRC errors") is read from the first of its counter
groups that the port reports, so mlx5's `rx_crc_errors_phy` is judged where ethtool has it
and the kernel's `rx_crc_errors` otherwise. A signal that no source reports is never judged
as zero: it is a `skip` naming the counters and why they could not be read.
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
from fabric.intent.platforms import roce_qos
from fabric.intent.profiles import CounterThresholds
from fabric.report.model import Status
from validators.judge import Out, where
from validators.registry import check


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


def _sig(label: str, *groups: tuple[Counter, ...]) -> Signal:
    return Signal(label, groups)


def _c(source: str, *names: str, per: tuple[tuple[str, str], ...] = ()) -> tuple[Counter, ...]:
    return tuple(Counter(source, n, per) for n in names)


# --- Spark twins: ip -s -s -j link (ip), ethtool -S (ethtool), hw_counters (rdma) ---------

HOST_FLAPS = (_sig("link flaps", _c(IP, "carrier_changes") + _c(ETHTOOL,
                                                                 "link_down_events_phy")),)
HOST_ERRORS = (
    _sig("CRC errors", _c(ETHTOOL, "rx_crc_errors_phy"), _c(IP, "rx_crc_errors")),
    _sig("symbol errors", _c(ETHTOOL, "rx_symbol_err_phy")),
    # mlx5: symbol errors FEC could not correct; other drivers count uncorrectable blocks
    _sig("FEC-uncorrectable errors", _c(ETHTOOL, "rx_pcs_symbol_err_phy"),
         _c(ETHTOOL, "rx_fec_uncorrectable_blocks", "fec_uncorrectable_blocks")),
    _sig("receive/transmit errors", _c(IP, "rx_errors", "tx_errors")),
)
_PHY_RX = ((ETHTOOL, "rx_packets_phy"),)
_PHY_TX = ((ETHTOOL, "tx_packets_phy"),)
HOST_DROPS = (
    _sig("port discards", _c(ETHTOOL, "rx_discards_phy", per=_PHY_RX)
         + _c(ETHTOOL, "tx_discards_phy", per=_PHY_TX)),
    _sig("receive-buffer drops", _c(ETHTOOL, "rx_out_of_buffer",
                                    per=((ETHTOOL, "rx_packets"), *_PHY_RX))),
    _sig("kernel drops", _c(IP, "rx_dropped", per=((IP, "rx_packets"),))
         + _c(IP, "tx_dropped", per=((IP, "tx_packets"),))),
)
HOST_RETRANS = (
    _sig("out-of-sequence packets", _c(RDMA, "out_of_sequence")),
    _sig("packet sequence errors", _c(RDMA, "packet_seq_err")),
    _sig("local ACK timeouts", _c(RDMA, "local_ack_timeout_err")),
    _sig("adaptive retransmissions", _c(RDMA, "roce_adp_retrans", "roce_adp_retrans_to")),
    _sig("implied NAK sequence errors", _c(RDMA, "implied_nak_seq_err")),
    _sig("RNR NAK retries", _c(RDMA, "rnr_nak_retry_err")),
)
PRIORITIES = range(8)


#: Link-level pause on a twin. mlx5 lists `rx/tx_prioN_pause` only for priorities with PFC
#: on (upstream counters.rst), so a pause on a priority without PFC is never counted per
#: priority: link-level pause is the one signal there is.
HOST_PAUSE = (
    _sig("link-level pause frames", _c(ETHTOOL, "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"),
         _c(ETHTOOL, "rx_global_pause", "tx_global_pause")),
)


def lossless_signals(pfc: Iterable[int]) -> tuple[Signal, ...]:
    """What the lossless class did on a twin: pause frames on its PFC priorities, and RoCE
    congestion control (ECN-marked packets received, CNPs sent and handled)."""
    return (
        _sig("PFC pause frames", tuple(c for p in sorted(set(pfc)) for c in _c(
            ETHTOOL, f"rx_prio{p}_pause", f"tx_prio{p}_pause"))),
        _sig("ECN and CNPs", _c(RDMA, "np_ecn_marked_roce_packets", "np_cnp_sent",
                                "rp_cnp_handled")),
    )


# --- switch lanes: /interface print stats (interface), /interface/ethernet (ethernet) -----

_LANE_RX = ((ETHERNET, "rx-packet"), (INTERFACE, "rx-packet"))
_LANE_TX = ((ETHERNET, "tx-packet"), (INTERFACE, "tx-packet"))
LANE_FLAPS = (_sig("link downs", _c(INTERFACE, "link-downs")),)
LANE_ERRORS = (
    _sig("FCS errors", _c(ETHERNET, "rx-fcs-error", "tx-fcs-error")),
    _sig("code/alignment errors", _c(ETHERNET, "rx-code-error", "rx-align-error")),
    _sig("FEC-uncorrected blocks", _c(ETHERNET, "rs-fec-uncorrected",
                                       "fc-fec-block-uncorrected")),
    _sig("receive/transmit errors", _c(INTERFACE, "rx-error", "tx-error")),
)
LANE_DROPS = (
    _sig("port drops", _c(ETHERNET, "rx-drop", "rx-overflow", per=_LANE_RX)
         + _c(ETHERNET, "tx-drop", per=_LANE_TX)),
    _sig("interface drops", _c(INTERFACE, "rx-drop", per=((INTERFACE, "rx-packet"),))
         + _c(INTERFACE, "tx-drop", "tx-queue-drop", per=((INTERFACE, "tx-packet"),))),
)
LANE_PAUSE = (_sig("pause frames", _c(ETHERNET, "rx-pause", "tx-pause")),)


# --- judging -------------------------------------------------------------------------------


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

    def __init__(self, intent: Intent, out: Out, window: CounterWindow) -> None:
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


def _window(facts: Facts, out: Out) -> CounterWindow | None:
    if facts.counters is None:
        out.skip("no counter snapshots in the facts (`fabric validate` takes them around "
                 "the ping matrix and bandwidth rounds)")
    return facts.counters


def judge(out: Out, port: Port, window: CounterWindow, what: str, signals: Iterable[Signal],
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


def _run(intent: Intent, facts: Facts, out: Out, what: str, host: Iterable[Signal] | None,
         lane: Iterable[Signal] | None, limit: Limit, hint: str) -> None:
    window = _window(facts, out)
    if window is None:
        return
    ports = Ports(intent, out, window)
    for signals, found in ((host, ports.twins), (lane, ports.lanes)):
        if signals is None:
            continue
        for port in found():
            judge(out, port, window, what, signals, limit,
                  hint.format(port=port.label, link=port.link))


def _t(intent: Intent) -> CounterThresholds:
    return intent.profile.counters


@check("counters.flaps")
def check_flaps(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges link flaps during the probes: each twin's carrier_changes and
    link_down_events_phy, each lane's link-downs, against the profile's flaps_max."""
    _run(intent, facts, out, "link flaps", HOST_FLAPS, LANE_FLAPS,
         Limit(max_count=_t(intent).flaps_max),
         "{port} lost its link while traffic ran: reseat or replace the cable of {link}, "
         "then look for 'Link down' in dmesg and at the switch log")


@check("counters.errors")
def check_errors(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges CRC, symbol, FEC-uncorrectable and FCS errors that grew during the probes,
    against the profile's errors_max."""
    _run(intent, facts, out, "physical errors", HOST_ERRORS, LANE_ERRORS,
         Limit(max_count=_t(intent).errors_max),
         "errors on {port} are physical: clean and reseat both ends of {link}, swap the "
         "DAC/transceiver; check that both ends run the same FEC mode (link.switch_lane)")


@check("counters.drops")
def check_drops(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges discards and drops during the probes as a share of the packets the same
    counters saw, against the profile's drops_max_ratio, never below its drops_floor (on a
    lane that carried no test, 2 drops of 9 frames are no evidence)."""
    thresholds = _t(intent)
    _run(intent, facts, out, "drops", HOST_DROPS, LANE_DROPS,
         Limit(max_ratio=thresholds.drops_max_ratio, floor=thresholds.drops_floor),
         "{port} dropped packets under load on {link}: rx_out_of_buffer means the host did "
         "not post buffers in time (IRQ affinity, ring size: ethtool -G); rx_discards_phy / "
         "rx-drop mean the port buffer overflowed (incast, flow control)")


@check("counters.retrans")
def check_retrans(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges RoCE retransmission counters (out_of_sequence, packet_seq_err,
    local_ack_timeout_err, roce_adp_retrans...) of each twin's RDMA port during the probes."""
    if not intent.profile.rdma:
        out.skip(f"profile {intent.profile.name} has no RDMA: RoCE retransmission counters "
                 "not judged")
        return
    _run(intent, facts, out, "RoCE retransmissions", HOST_RETRANS, None,
         Limit(max_count=_t(intent).retrans_max),
         "RoCE on {port} retransmitted: packets were lost on {link}; see counters.drops and "
         "counters.errors at both ends, and the QoS (PFC/ECN) settings (qos.consistent)")


@check("counters.pause")
def check_pause(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges pause frames during the probes where PFC is off (link-level on twins: mlx5
    counts per-priority pause only on PFC priorities; rx/tx-pause on lanes without PFC),
    against the profile's pause_max."""
    window = _window(facts, out)
    if window is None:
        return
    t = _t(intent)
    limit = Limit(max_count=t.pause_max, over="fail" if t.pause_status == "fail" else "warn")
    hint = ("{port} sent or received pause frames on {link} while PFC is off there: a "
            "receiver could not keep up; see counters.drops, `ethtool -a`, and the lane's "
            "rx/tx-flow-control")
    ports = Ports(intent, out, window)
    for port in ports.twins():
        judge(out, port, window, "pause frames", HOST_PAUSE, limit,
              hint.format(port=port.label, link=port.link))
    pfc = pfc_lanes(intent, facts)
    for port in ports.lanes():
        if port.name in pfc:
            out.skip(f"{port.label} on {port.link}: PFC on traffic class "
                     f"{', '.join(map(str, pfc[port.name]))} (qos: lossless): pause frames on "
                     "the lossless class are expected, and the lane's rx/tx-pause counters do "
                     "not say which priority paused, so they are not judged as an alarm "
                     "(qos.consistent judges the class)", host=port.host, link=port.link)
            continue
        judge(out, port, window, "pause frames", LANE_PAUSE, limit,
              hint.format(port=port.label, link=port.link))


@check("counters.lossless")
def check_lossless(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges nothing as a fault, it reports: on a lossless topology, what the lossless class
    did on each twin during the probes (the RDMA tests run in it): its PFC priorities' pause
    frames and the ECN and CNP counters (pausing and marking are the class at work)."""
    if not intent.lossless:
        out.skip("qos: lossy: no lossless class to report (the RDMA tests run at DSCP 0)")
        return
    window = _window(facts, out)
    if window is None:
        return
    for port in Ports(intent, out, window).twins():
        qos = facts.sparks[port.host].qos.get(port.name)
        pfc = qos.pfc_enabled if qos is not None and qos.pfc_enabled else (
            roce_qos().priority,)
        judge(out, port, window, "lossless class", lossless_signals(pfc),
              Limit(max_count=2**62), "")


def pfc_lanes(intent: Intent, facts: Facts) -> dict[str, tuple[int, ...]]:
    """Lanes running PFC on a lossless topology -> their PFC traffic classes (from the switch
    QoS facts; without them, every cabled lane with the recipe's priority)."""
    if not intent.lossless or intent.switch is None:
        return {}
    q = facts.switch.qos if facts.switch is not None else None
    if q is not None and q.error is None:
        return {n: p.pfc_classes for n, p in q.ports.items() if p.pfc_classes}
    prio = (roce_qos().priority,)
    return {lp.name: prio for lp in intent.switch.lanes if lp.cabled_to}
