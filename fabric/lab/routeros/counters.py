"""Interface counters as RouterOS prints them, read from the kernel of the switch namespace.

Which RouterOS attribute comes from which kernel counter is data (the tables below). An
attribute is printed only where the kernel has a source for it: veth has no pause frames, no
FEC and no per-size histograms, so ``rx-pause``, ``rs-fec-uncorrected``, ``rx-64`` ... are never
printed, not even as 0, and a counter the kernel did not report this time is left out too.

A lane without a cable has no netdev. RouterOS still lists its counters (the switch chip keeps
them), and nothing ever passed or went down there, so the emulator prints every attribute of
the tables for it as 0: that is what the chip would count, not a guess. A cabled lane whose
netdev is missing (a broken lab) prints no counters at all.
"""

from __future__ import annotations

from .backend import KernelCounters

Row = dict[str, str]

#: ``/interface`` (``print`` and ``print stats``): attribute -> stats64 field.
INTERFACE_STATS: tuple[tuple[str, str], ...] = (
    ("rx-byte", "rx_bytes"),
    ("tx-byte", "tx_bytes"),
    ("rx-packet", "rx_packets"),
    ("tx-packet", "tx_packets"),
    ("rx-drop", "rx_dropped"),
    ("tx-drop", "tx_dropped"),
    ("rx-error", "rx_errors"),
    ("tx-error", "tx_errors"),
)
#: ``/interface``: the link-downs of a port (sysfs carrier_down_count).
LINK_DOWNS = "link-downs"
#: ``/interface``: packets its transmit queue dropped (the root qdisc's drops).
TX_QUEUE_DROP = "tx-queue-drop"

#: ``/interface/ethernet print stats``: attribute -> stats64 field.
ETHERNET_STATS: tuple[tuple[str, str], ...] = (
    ("rx-bytes", "rx_bytes"),
    ("tx-bytes", "tx_bytes"),
    ("rx-packet", "rx_packets"),
    ("tx-packet", "tx_packets"),
    ("rx-fcs-error", "rx_crc_errors"),
    ("rx-align-error", "rx_frame_errors"),
    ("rx-length-error", "rx_length_errors"),
    ("rx-overflow", "rx_over_errors"),
    ("rx-drop", "rx_dropped"),
    ("tx-drop", "tx_dropped"),
)


def interface_counters(counters: KernelCounters | None) -> Row:
    """The counter attributes of one ``/interface`` row (the order ``print stats`` shows)."""
    if counters is None:
        return {}
    row: Row = {}
    if counters.carrier_down_count is not None:
        row[LINK_DOWNS] = str(counters.carrier_down_count)
    for attr, field in INTERFACE_STATS:
        if field in counters.stats:
            row[attr] = str(counters.stats[field])
    if counters.queue_drops is not None:
        row[TX_QUEUE_DROP] = str(counters.queue_drops)
    return row


def ethernet_counters(counters: KernelCounters | None) -> Row:
    """The counter attributes of one ``/interface/ethernet print stats`` row."""
    if counters is None:
        return {}
    return {attr: str(counters.stats[f]) for attr, f in ETHERNET_STATS if f in counters.stats}


def never_used(name: str) -> KernelCounters:
    """The counters of a port with nothing plugged in: every source the tables read, at 0."""
    fields = {f for _, f in (*INTERFACE_STATS, *ETHERNET_STATS)}
    return KernelCounters(name, dict.fromkeys(sorted(fields), 0), 0, 0)
