"""Typed records that ``fabric.parsers.parse`` returns. All are frozen dataclasses.

Units are in the field name (``_gbps`` = 10^9 bit/s, ``_GBps`` = 10^9 byte/s, ``_us``, ``_ms``).
A field is None when the tool did not print it; it is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    """Base of every parsed record."""


# --- RDMA devices -------------------------------------------------------------------------


@dataclass(frozen=True)
class GidEntry(Record):
    """One populated GID table slot (show_gids, sysfs)."""

    device: str
    port: int
    index: int
    gid: str
    ipv4: str | None
    roce_version: str  # "v1" or "v2"
    netdev: str | None


@dataclass(frozen=True)
class RdmaNetdev(Record):
    """One ``ibdev2netdev`` line: RDMA device port -> netdev and its carrier state."""

    rdma_device: str
    port: int
    netdev: str
    state: str  # "Up", "Down" or "NA"


@dataclass(frozen=True)
class RdmaLink(Record):
    """One ``rdma link show`` line."""

    rdma_device: str
    port: int
    state: str
    physical_state: str
    netdev: str | None


@dataclass(frozen=True)
class IbvGid(Record):
    """A GID listed by ``ibv_devinfo -v``."""

    index: int
    gid: str
    gid_type: str  # "RoCE v1" / "RoCE v2"


@dataclass(frozen=True)
class IbvPort(Record):
    """One port of one HCA in ``ibv_devinfo`` (device fields repeated on each port)."""

    hca_id: str | None
    fw_ver: str | None
    node_guid: str | None
    sys_image_guid: str | None
    vendor_part_id: int | None
    board_id: str | None
    port: int | None
    state: str | None  # e.g. "PORT_ACTIVE"
    phys_state: str | None  # e.g. "LINK_UP"
    max_mtu: int | None
    active_mtu: int | None
    link_layer: str | None
    gids: tuple[IbvGid, ...]


@dataclass(frozen=True)
class IbPortAttrs(Record):
    """Per-port sysfs ``rate`` and ``state`` of an RDMA device."""

    rdma_device: str
    rate_gbps: float
    width: str  # "4X"
    speed_name: str  # "HDR", "QDR", ...
    state_code: int
    state: str  # "ACTIVE", "DOWN", ...


# --- perftest -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PerftestHeader(Record):
    """The perftest header block: test name, role and the key/value settings."""

    test: str | None  # "RDMA_Write BW Test"
    role: str | None  # "server", "client" or None when the output does not say
    device: str | None
    qps: int | None
    connection_type: str | None
    mtu_bytes: int | None
    link_type: str | None
    gid_index: int | None
    rdma_cm: bool | None
    local_gid: str | None
    remote_gid: str | None
    settings: tuple[tuple[str, str], ...]  # every "key : value" pair, in order
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class PerftestBandwidth(Record):
    """One perftest bandwidth result row, normalised to Gb/s (10^9 bit/s)."""

    bytes: int
    iterations: int
    bw_peak_gbps: float
    bw_average_gbps: float
    msg_rate_mpps: float
    raw_unit: str  # the unit printed: "Gb/sec", "MB/sec" or "MiB/sec"


@dataclass(frozen=True)
class PerftestLatency(Record):
    """One perftest latency result row (microseconds)."""

    bytes: int
    iterations: int
    t_min_us: float
    t_max_us: float
    t_typical_us: float
    t_avg_us: float
    t_stdev_us: float
    p99_us: float
    p99_9_us: float


@dataclass(frozen=True)
class PerftestError(Record):
    """A perftest failure (connection, QP transition, key exchange, completion, device)."""

    category: str  # "connect", "qp_rtr", "exchange", "completion", "port_state", "no_device"
    peer: str | None  # "host:port" when the tool names it
    messages: tuple[str, ...]
    line_no: int


# --- ethtool ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EthtoolSettings(Record):
    """``ethtool IFACE`` (or a grep of it): speed, lanes, duplex, autoneg, link."""

    interface: str | None
    speed_mbps: int | None  # None for "Unknown!" or when not printed
    lanes: int | None
    duplex: str | None
    auto_negotiation: bool | None
    port: str | None
    link_detected: bool | None
    supported_link_modes: tuple[str, ...]
    advertised_link_modes: tuple[str, ...]


@dataclass(frozen=True)
class EthtoolDriver(Record):
    """``ethtool -i``: driver, version and firmware (PSID split off)."""

    driver: str
    version: str | None
    firmware_version: str | None
    psid: str | None
    bus_info: str | None


@dataclass(frozen=True)
class EthtoolCounter(Record):
    """One ``ethtool -S`` counter."""

    name: str
    value: int


@dataclass(frozen=True)
class EthtoolFec(Record):
    """``ethtool --show-fec``."""

    interface: str
    configured: tuple[str, ...]
    active: str


@dataclass(frozen=True)
class EthtoolPause(Record):
    """``ethtool -a`` (``--show-pause``): link-level flow control. mlx5 turns it off when PFC
    is written (the whole PFCC register), so a lossless rollback must put it back."""

    interface: str
    autoneg: bool
    rx: bool
    tx: bool


# --- iproute2 -----------------------------------------------------------------------------


@dataclass(frozen=True)
class IpAddress(Record):
    """One address of an interface."""

    family: str  # "inet" / "inet6"
    address: str
    prefixlen: int
    scope: str | None


@dataclass(frozen=True)
class IpLink(Record):
    """One interface from ``ip -j [-d] link`` / ``ip -j addr`` / ``ip addr show``."""

    ifname: str
    ifindex: int | None
    mtu: int | None
    operstate: str | None
    flags: tuple[str, ...]
    address: str | None
    kind: str | None  # linkinfo.info_kind ("veth", "bond", ...)
    addresses: tuple[IpAddress, ...]


@dataclass(frozen=True)
class IpRoute(Record):
    """One route from ``ip -j route``."""

    dst: str
    gateway: str | None
    dev: str | None
    protocol: str | None
    scope: str | None
    prefsrc: str | None
    metric: int | None


@dataclass(frozen=True)
class IpBrief(Record):
    """One line of ``ip -br link`` or ``ip -br addr``."""

    ifname: str
    peer: str | None  # "if5" in "va@if5"
    operstate: str
    address: str | None  # MAC (link) or None (addr)
    flags: tuple[str, ...]
    addresses: tuple[str, ...]  # CIDRs (addr)


# --- counters (ip -s -s -j link, sysfs hw_counters) -------------------------------------------


@dataclass(frozen=True)
class IpLinkStats(Record):
    """One interface of ``ip -s [-s] -j link``: its kernel counters, named ``rx_<key>`` and
    ``tx_<key>`` after iproute2's JSON keys, plus ``carrier_changes`` (only with ``-s -s``).
    A counter the output does not carry is absent, never zero."""

    ifname: str
    ifindex: int | None
    operstate: str | None
    counters: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class RdmaHwCounter(Record):
    """One ``/sys/class/infiniband/<dev>/ports/<port>/hw_counters/<name>`` value."""

    rdma_device: str
    port: int
    name: str
    value: int


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


# --- LLDP / chrony / QoS / iptables ---------------------------------------------------------


@dataclass(frozen=True)
class LldpNeighbor(Record):
    """One LLDP neighbor seen on a local interface."""

    local_interface: str
    chassis_name: str | None
    chassis_id: str | None
    port_id: str | None
    port_descr: str | None
    mgmt_ips: tuple[str, ...]


@dataclass(frozen=True)
class ChronyTracking(Record):
    """``chronyc tracking``."""

    reference_id: str
    reference_name: str | None
    stratum: int
    system_time_offset_s: float  # positive = system clock is fast
    last_offset_s: float
    rms_offset_s: float
    leap_status: str


@dataclass(frozen=True)
class QosTrafficClass(Record):
    """One ``tc:`` block of ``mlnx_qos``."""

    tc: int
    tsa: str
    bw_percent: int | None
    priorities: tuple[int, ...]


@dataclass(frozen=True)
class MlnxQos(Record):
    """``mlnx_qos -i IFACE``: trust state, DSCP map, PFC and traffic classes."""

    dcbx_mode: str | None
    trust: str
    dscp2prio: tuple[tuple[int, tuple[int, ...]], ...]
    pfc_enabled: tuple[int, ...]  # priorities with PFC on
    pfc_buffer: tuple[int, ...]
    cable_len: int | None
    traffic_classes: tuple[QosTrafficClass, ...]


@dataclass(frozen=True)
class IptablesChain(Record):
    """A chain's default policy (``iptables -S`` / ``-L``) and its rule count."""

    chain: str
    policy: str
    rules: int


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


# --- RouterOS / dmesg -----------------------------------------------------------------------


@dataclass(frozen=True)
class RouterosCommand(Record):
    """One command of ``/export``: menu path, verb, ``[ find ... ]`` selector and attributes."""

    path: str  # "/interface ethernet"
    action: str  # "set", "add", ...
    find: tuple[tuple[str, str], ...]
    attributes: tuple[tuple[str, str], ...]
    line_no: int


@dataclass(frozen=True)
class KernelEvent(Record):
    """One dmesg line, with the device it is about."""

    timestamp: str
    driver: str | None
    bus_id: str | None
    device: str | None  # the netdev or RDMA device named after the bus id
    message: str
