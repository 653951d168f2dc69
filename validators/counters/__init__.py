"""counters: what each twin's and each switch lane's counters did while the probes ran.

The snapshots (`Facts.counters`) are taken just before and just after the active probes; every
check judges the deltas against the profile's `counters` thresholds. Which counters say what
is data (the tables below): a *signal* ("CRC errors") is read from the first of its counter
groups that the port reports, so mlx5's `rx_crc_errors_phy` is judged where ethtool has it
and the kernel's `rx_crc_errors` otherwise. A signal that no source reports is never judged
as zero: it is a `skip` naming the counters and why they could not be read. How a window
is judged, port by port, is `validators.counters.window`.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabric.facts import ETHERNET, ETHTOOL, INTERFACE, IP, RDMA, Facts
from fabric.intent.model import Intent
from fabric.intent.platforms import roce_qos
from fabric.intent.profiles import CounterThresholds
from validators.counters.window import (
    Counter,
    Limit,
    Ports,
    Signal,
    group,
    judge,
    judge_ports,
    signal,
    window_or_skip,
)
from validators.judge import Findings
from validators.registry import BANDWIDTH, PING, check, needs

__all__ = ["Counter", "Signal", "lossless_signals", "pfc_lanes"]

#: What counters judges: every port's counters before and after the pings and bandwidth rounds.
NEEDS = needs("counters", spark=True, switch=True, probes=(PING, BANDWIDTH), window=True)

# --- Spark twins: ip -s -s -j link (ip), ethtool -S (ethtool), hw_counters (rdma) ---------

HOST_FLAPS = (signal("link flaps", group(IP, "carrier_changes")
                     + group(ETHTOOL, "link_down_events_phy")),)
HOST_ERRORS = (
    signal("CRC errors", group(ETHTOOL, "rx_crc_errors_phy"), group(IP, "rx_crc_errors")),
    signal("symbol errors", group(ETHTOOL, "rx_symbol_err_phy")),
    # mlx5: symbol errors FEC could not correct; other drivers count uncorrectable blocks
    signal("FEC-uncorrectable errors", group(ETHTOOL, "rx_pcs_symbol_err_phy"),
           group(ETHTOOL, "rx_fec_uncorrectable_blocks", "fec_uncorrectable_blocks")),
    signal("receive/transmit errors", group(IP, "rx_errors", "tx_errors")),
)
_PHY_RX = ((ETHTOOL, "rx_packets_phy"),)
_PHY_TX = ((ETHTOOL, "tx_packets_phy"),)
HOST_DROPS = (
    signal("port discards", group(ETHTOOL, "rx_discards_phy", per=_PHY_RX)
           + group(ETHTOOL, "tx_discards_phy", per=_PHY_TX)),
    signal("receive-buffer drops", group(ETHTOOL, "rx_out_of_buffer",
                                         per=((ETHTOOL, "rx_packets"), *_PHY_RX))),
    signal("kernel drops", group(IP, "rx_dropped", per=((IP, "rx_packets"),))
           + group(IP, "tx_dropped", per=((IP, "tx_packets"),))),
)
HOST_RETRANS = (
    signal("out-of-sequence packets", group(RDMA, "out_of_sequence")),
    signal("packet sequence errors", group(RDMA, "packet_seq_err")),
    signal("local ACK timeouts", group(RDMA, "local_ack_timeout_err")),
    signal("adaptive retransmissions", group(RDMA, "roce_adp_retrans", "roce_adp_retrans_to")),
    signal("implied NAK sequence errors", group(RDMA, "implied_nak_seq_err")),
    signal("RNR NAK retries", group(RDMA, "rnr_nak_retry_err")),
)
PRIORITIES = range(8)


#: Link-level pause on a twin. mlx5 lists `rx/tx_prioN_pause` only for priorities with PFC
#: on (upstream counters.rst), so a pause on a priority without PFC is never counted per
#: priority: link-level pause is the one signal there is.
HOST_PAUSE = (
    signal("link-level pause frames", group(ETHTOOL, "rx_pause_ctrl_phy", "tx_pause_ctrl_phy"),
           group(ETHTOOL, "rx_global_pause", "tx_global_pause")),
)


def lossless_signals(pfc: Iterable[int]) -> tuple[Signal, ...]:
    """What the lossless class did on a twin: pause frames on its PFC priorities, and RoCE
    congestion control (ECN-marked packets received, CNPs sent and handled)."""
    return (
        signal("PFC pause frames", tuple(c for p in sorted(set(pfc)) for c in group(
            ETHTOOL, f"rx_prio{p}_pause", f"tx_prio{p}_pause"))),
        signal("ECN and CNPs", group(RDMA, "np_ecn_marked_roce_packets", "np_cnp_sent",
                                     "rp_cnp_handled")),
    )


# --- switch lanes: /interface print stats (interface), /interface/ethernet (ethernet) -----

_LANE_RX = ((ETHERNET, "rx-packet"), (INTERFACE, "rx-packet"))
_LANE_TX = ((ETHERNET, "tx-packet"), (INTERFACE, "tx-packet"))
LANE_FLAPS = (signal("link downs", group(INTERFACE, "link-downs")),)
LANE_ERRORS = (
    signal("FCS errors", group(ETHERNET, "rx-fcs-error", "tx-fcs-error")),
    signal("code/alignment errors", group(ETHERNET, "rx-code-error", "rx-align-error")),
    signal("FEC-uncorrected blocks", group(ETHERNET, "rs-fec-uncorrected",
                                            "fc-fec-block-uncorrected")),
    signal("receive/transmit errors", group(INTERFACE, "rx-error", "tx-error")),
)
LANE_DROPS = (
    signal("port drops", group(ETHERNET, "rx-drop", "rx-overflow", per=_LANE_RX)
           + group(ETHERNET, "tx-drop", per=_LANE_TX)),
    signal("interface drops", group(INTERFACE, "rx-drop", per=((INTERFACE, "rx-packet"),))
           + group(INTERFACE, "tx-drop", "tx-queue-drop", per=((INTERFACE, "tx-packet"),))),
)
LANE_PAUSE = (signal("pause frames", group(ETHERNET, "rx-pause", "tx-pause")),)


def _t(intent: Intent) -> CounterThresholds:
    return intent.profile.counters


@check("counters.flaps")
def check_flaps(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges link flaps during the probes: each twin's carrier_changes and
    link_down_events_phy, each lane's link-downs, against the profile's flaps_max."""
    judge_ports(intent, facts, out, "link flaps", HOST_FLAPS, LANE_FLAPS,
         Limit(max_count=_t(intent).flaps_max),
         "{port} lost its link while traffic ran: reseat or replace the cable of {link}, "
         "then look for 'Link down' in dmesg and at the switch log")


@check("counters.errors")
def check_errors(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges CRC, symbol, FEC-uncorrectable and FCS errors that grew during the probes,
    against the profile's errors_max."""
    judge_ports(intent, facts, out, "physical errors", HOST_ERRORS, LANE_ERRORS,
         Limit(max_count=_t(intent).errors_max),
         "errors on {port} are physical: clean and reseat both ends of {link}, swap the "
         "DAC/transceiver; check that both ends run the same FEC mode (link.switch_lane)")


@check("counters.drops")
def check_drops(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges discards and drops during the probes as a share of the packets the same
    counters saw, against the profile's drops_max_ratio, never below its drops_floor (on a
    lane that carried no test, 2 drops of 9 frames are no evidence)."""
    thresholds = _t(intent)
    judge_ports(intent, facts, out, "drops", HOST_DROPS, LANE_DROPS,
         Limit(max_ratio=thresholds.drops_max_ratio, floor=thresholds.drops_floor),
         "{port} dropped packets under load on {link}: rx_out_of_buffer means the host did "
         "not post buffers in time (IRQ affinity, ring size: ethtool -G); rx_discards_phy / "
         "rx-drop mean the port buffer overflowed (incast, flow control)")


@check("counters.retrans")
def check_retrans(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges RoCE retransmission counters (out_of_sequence, packet_seq_err,
    local_ack_timeout_err, roce_adp_retrans...) of each twin's RDMA port during the probes."""
    if not intent.profile.rdma:
        out.skip(f"profile {intent.profile.name} has no RDMA: RoCE retransmission counters "
                 "not judged")
        return
    judge_ports(intent, facts, out, "RoCE retransmissions", HOST_RETRANS, None,
         Limit(max_count=_t(intent).retrans_max),
         "RoCE on {port} retransmitted: packets were lost on {link}; see counters.drops and "
         "counters.errors at both ends, and the QoS (PFC/ECN) settings (qos.consistent)")


@check("counters.pause")
def check_pause(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges pause frames during the probes where PFC is off (link-level on twins: mlx5
    counts per-priority pause only on PFC priorities; rx/tx-pause on lanes without PFC),
    against the profile's pause_max."""
    window = window_or_skip(facts, out)
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
def check_lossless(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges nothing as a fault, it reports: on a lossless topology, what the lossless class
    did on each twin during the probes (the RDMA tests run in it): its PFC priorities' pause
    frames and the ECN and CNP counters (pausing and marking are the class at work)."""
    if not intent.lossless:
        out.skip("qos: lossy: no lossless class to report (the RDMA tests run at DSCP 0)")
        return
    window = window_or_skip(facts, out)
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
