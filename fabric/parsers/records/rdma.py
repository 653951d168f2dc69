"""Parsed records: RDMA devices (show_gids, ibdev2netdev, rdma link, ibv_devinfo, sysfs),
perftest."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.parsers.records.base import Record

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
