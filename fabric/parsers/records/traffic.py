"""Parsed records: traffic: ping, iperf3 and NCCL (nccl-tests tables, NCCL_DEBUG=INFO lines)."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.parsers.records.base import Record

# --- ping / iperf3 ------------------------------------------------------------------------


@dataclass(frozen=True)
class PingResult(Record):
    """A ``ping`` run: replies, loss and the MTU errors that explain a failure."""

    target: str | None
    payload_bytes: int | None
    packet_bytes: int | None
    transmitted: int | None
    received: int | None
    errors: int | None
    loss_percent: float | None
    reply_bytes: tuple[int, ...]
    rtt_avg_ms: float | None
    local_mtu: int | None  # "local error: message too long, mtu=N"
    path_mtu: int | None  # "Frag needed and DF set (mtu = N)"
    exit_code: int | None  # a captured "[exit=N]" trailer
    error: str | None = None  # last other failure: "Destination Host Unreachable", "connect: ..."


@dataclass(frozen=True)
class Iperf3Result(Record):
    """An ``iperf3 -J`` run. ``error`` is set even when iperf3 exited 0."""

    role: str | None  # "client" / "server"
    error: str | None
    version: str | None
    protocol: str | None
    num_streams: int | None
    reverse: bool | None
    local_host: str | None
    remote_host: str | None
    sent_bps: float | None
    received_bps: float | None
    retransmits: int | None


# --- NCCL ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NcclTestRow(Record):
    """One nccl-tests result row; ``wrong`` is #wrong (new) or error (old format)."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int | None  # None in the old format
    oop_time_us: float
    oop_algbw_GBps: float
    oop_busbw_GBps: float
    oop_wrong: str
    ip_time_us: float
    ip_algbw_GBps: float
    ip_busbw_GBps: float
    ip_wrong: str


@dataclass(frozen=True)
class NcclTestSummary(Record):
    """nccl-tests header and footer facts."""

    version: str | None
    collective: str | None
    ranks: tuple[str, ...]  # hostnames, rank order
    out_of_bounds: int | None
    avg_busbw_GBps: float | None


@dataclass(frozen=True)
class NcclNetDevice(Record):
    """One device in an NCCL ``NET/... : Using`` line."""

    index: int
    name: str
    port: int | None
    link_layer: str | None  # "RoCE", "IB"; None for sockets
    address: str | None  # sockets only
    merged_into: int | None  # virtual NIC index for merged NICs


@dataclass(frozen=True)
class NcclNetSelection(Record):
    """NCCL's network choice: ``transport`` is "IB" (IB/RoCE verbs) or "Socket" (TCP fallback)."""

    host: str | None
    transport: str
    devices: tuple[NcclNetDevice, ...]
    relaxed_ordering: bool
    oob_interface: str | None
    oob_address: str | None
    line_no: int


@dataclass(frozen=True)
class NcclWarning(Record):
    """An ``NCCL WARN`` line."""

    host: str | None
    message: str
    line_no: int
