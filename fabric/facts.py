"""Typed facts: what the hardware says, parsed. Collected by tasks, judged by validators.

Every record is a frozen dataclass, serialisable with `facts_to_json` and loadable with
`facts_from_json`, so validators can be tested with recorded facts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from pydantic import TypeAdapter

#: Counter sources (keys of `PortCounters.values`): a Spark's `ip -s` link stats, ethtool -S
#: and RDMA hw_counters; a switch lane's `/interface` and `/interface/ethernet` stats.
IP, ETHTOOL, RDMA = "ip", "ethtool", "rdma"
INTERFACE, ETHERNET = "interface", "ethernet"

#: The nccl-tests binaries the nccl family runs, and their launcher.
TESTS = ("all_reduce_perf", "all_gather_perf")
MPIRUN = "mpirun"
#: Their message sizes: 512 MiB to 4 GiB, doubling (fits a Spark's unified memory beside a
#: model; `host.memory` judges the room for the largest).
NCCL_SIZES = "-b 512M -e 4G -f 2"


@dataclass(frozen=True)
class NetdevFact:
    """One netdev from `ip -j addr`/`ip -j link`."""

    name: str
    mtu: int
    admin_up: bool
    carrier: bool
    mac: str | None = None
    kind: str | None = None  # e.g. "macvlan", "veth", None for physical
    addresses: tuple[str, ...] = ()  # IPv4 "a.b.c.d/len"


@dataclass(frozen=True)
class RouteFact:
    """One IPv4 route: `dst` is a prefix or "default"."""

    dst: str
    dev: str
    gateway: str | None = None


@dataclass(frozen=True)
class EthtoolFact:
    """ethtool + ethtool -i for one netdev."""

    netdev: str
    speed_mbps: int | None  # None for "Unknown!"
    link_detected: bool | None
    driver: str | None = None
    driver_version: str | None = None
    firmware: str | None = None


@dataclass(frozen=True)
class GidFact:
    """One populated GID table slot of an RDMA device."""

    rdma: str
    port: int
    index: int
    gid: str
    gid_type: str  # "RoCE v2", "RoCE v1", "IB"
    ipv4: str | None
    netdev: str | None


@dataclass(frozen=True)
class NeighborFact:
    """An LLDP neighbor seen on a local interface.

    `age_s`: seconds as the source counts them (lldpd: since it learned the entry or saw it
    change; RouterOS: since its last frame), None when not reported. `beacon`: the value of
    the fabric beacon TLV the entry carries (lldpd; `fabric.neighbors.BEACON_OUI`), None
    without one. `stale`: the entry is not fresh evidence of the cable plugged in now (heard
    before the port's last link change, or not shown to be heard since; see
    `fabric.neighbors`): it counts neither for nor against.
    """

    local_port: str
    system_name: str
    port_id: str
    port_descr: str | None = None
    age_s: float | None = None
    stale: bool = False
    beacon: str | None = None


@dataclass(frozen=True)
class VersionFacts:
    kernel: str | None = None
    nic_driver: str | None = None
    nic_firmware: str | None = None
    nccl: str | None = None
    cuda_driver: str | None = None
    cuda: str | None = None  # CUDA toolkit (runtime) version, where installed
    bios: str | None = None  # DMI bios_version (bios_date), where the host has DMI


@dataclass(frozen=True)
class TimeFact:
    source: str  # "chrony", "timedatectl"…
    synced: bool | None
    offset_s: float | None
    stratum: int | None = None


@dataclass(frozen=True)
class QosFact:
    netdev: str
    trust: str | None  # "dscp" or "pcp"
    pfc_enabled: tuple[int, ...] = ()
    #: (priority, its DSCP values) from `mlnx_qos -i` (empty: not collected)
    dscp2prio: tuple[tuple[int, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class PcieFact:
    """The PCIe link of one twin's function: current and maximum speed (GT/s) and width."""

    netdev: str
    speed_gts: float | None
    width: int | None
    max_speed_gts: float | None = None
    max_width: int | None = None
    slot: str | None = None  # PCI address


@dataclass(frozen=True)
class ImageFact:
    """A local container image: its id, tags and the NCCL its environment declares."""

    image_id: str
    tags: tuple[str, ...]
    nccl: str | None = None


@dataclass(frozen=True)
class HostFacts:
    """A Spark's own state the `host` checks judge. None in a field: not read (not in the
    batch, or unreadable; the reason is in `SparkFacts.notes`/`missing`).

    `nm_profiles`: NetworkManager profiles as (name, device) pairs, device None when inactive;
    `remove_ipc`: logind's effective RemoveIPC (systemd's default, yes, when nothing sets it).
    """

    pcie: dict[str, PcieFact] = field(default_factory=dict)
    bios_version: str | None = None
    bios_date: str | None = None
    nm_profiles: tuple[tuple[str, str | None], ...] | None = None
    remove_ipc: bool | None = None
    remove_ipc_file: str | None = None  # the file whose line decided it (None: the default)
    mem_total_kib: int | None = None
    mem_available_kib: int | None = None
    images: tuple[ImageFact, ...] | None = None  # local container images (docker)


@dataclass(frozen=True)
class SparkFacts:
    """Everything one Spark reported in one SSH session."""

    host: str
    hostname: str
    netdevs: dict[str, NetdevFact]
    routes: tuple[RouteFact, ...]
    ethtool: dict[str, EthtoolFact]
    rdma: dict[str, str]  # RDMA device -> netdev (empty: "no RDMA devices")
    gids: tuple[GidFact, ...]
    neighbors: tuple[NeighborFact, ...]
    versions: VersionFacts
    time: TimeFact | None
    forward_policy: str | None  # iptables FORWARD policy, None if iptables is missing
    qos: dict[str, QosFact]
    missing: tuple[str, ...] = ()  # tools absent on the host, recorded rather than crashed on
    notes: tuple[str, ...] = ()
    #: The LLDP beacon this host announced during the collection (None: it did not, or could
    #: not; `fabric.neighbors`).
    lldp_beacon: str | None = None
    host_state: HostFacts = field(default_factory=HostFacts)


@dataclass(frozen=True)
class LaneFact:
    """One switch lane: configuration (/interface/ethernet) and `monitor once` state."""

    name: str
    disabled: bool
    running: bool
    mtu: int | None
    l2mtu: int | None
    max_l2mtu: int | None
    speed: str | None
    auto_negotiation: bool | None
    fec_mode: str | None
    status: str | None  # link-ok | no-link
    rate: str | None  # "200Gbps"
    bridge: str | None = None
    hw_offload: bool | None = None
    #: Seconds since the lane's last link change (up or down) when read; None: not reported.
    link_change_age_s: float | None = None


@dataclass(frozen=True)
class BridgeFact:
    name: str
    mtu: int | None
    ports: tuple[str, ...]


@dataclass(frozen=True)
class SwitchQosPort:
    """One switch port's QoS (/interface/ethernet/switch/qos/port) with its PFC profile's
    traffic classes resolved."""

    name: str
    trust_l3: str | None  # ignore | trust | keep
    pfc: str | None  # PFC profile name ("disabled": none)
    pfc_classes: tuple[int, ...] = ()


@dataclass(frozen=True)
class SwitchQosFact:
    """The switch chip's QoS as the RouterOS menus report it (read where the topology is
    lossless): offload, DSCP -> traffic class, queues with ECN or strict priority, lossless
    traffic classes (7.23+), each port's trust and PFC, LLDP DCBX."""

    offloaded: bool | None  # /interface/ethernet/switch qos-hw-offloading
    dscp_classes: tuple[tuple[int, int], ...] = ()  # DSCP -> traffic class, mapped ones
    ecn_classes: tuple[int, ...] = ()
    strict_classes: tuple[int, ...] = ()
    lossless_classes: tuple[int, ...] = ()
    ports: dict[str, SwitchQosPort] = field(default_factory=dict)
    lldp_dcbx: bool | None = None
    error: str | None = None  # why the QoS menus could not be read (e.g. RouterOS < 7.15)

    def traffic_class_of(self, dscp: int) -> int:
        """The traffic class a trusted packet with `dscp` gets (unmapped: the default
        profile's, 1: best effort)."""
        return dict(self.dscp_classes).get(dscp, 1)


@dataclass(frozen=True)
class SwitchFacts:
    host: str
    identity: str
    version: str
    board: str | None
    lanes: dict[str, LaneFact]
    bridges: tuple[BridgeFact, ...]
    neighbors: tuple[NeighborFact, ...]
    lldp_enabled: bool | None = None
    qos: SwitchQosFact | None = None  # read only where the topology is lossless


@dataclass(frozen=True)
class PingFact:
    """A don't-fragment ping from one twin to another (active probe)."""

    src_host: str
    src_netdev: str
    dst_host: str
    dst_netdev: str
    dst_addr: str
    size: int
    sent: int
    received: int
    error: str | None = None  # e.g. "local error: message too long, mtu=1500"
    link_id: str | None = None


@dataclass(frozen=True)
class BandwidthFact:
    """One bandwidth measurement on a link (active probe)."""

    link_id: str
    tool: str  # "iperf3" or "ib_write_bw"
    twin: int | None  # 0 = A, 1 = B, None = both twins at once
    src_host: str
    dst_host: str
    gbps: float | None
    error: str | None = None
    round: int = 0
    duration_s: float = 0.0


@dataclass(frozen=True)
class NcclFact:
    """One nccl-tests run (active probe): average bus bandwidth over the named hosts."""

    test: str  # "all_reduce_perf", "all_gather_perf"…
    hosts: tuple[str, ...]
    busbw_gbytes: float | None  # "# Avg bus bandwidth" in GB/s
    error: str | None = None


@dataclass(frozen=True)
class PortCounters:
    """One interface's counters at one moment, by source: on a Spark `ip` (`ip -s -s -j
    link`), `ethtool` (`ethtool -S`) and `rdma` (the twin's RDMA device, port 1,
    hw_counters); on the switch `interface` (`/interface print stats`) and `ethernet`
    (`/interface/ethernet print stats`). A source that could not be read is in `unavailable`
    with the reason; a counter its source did not list is absent, never zero."""

    name: str  # netdev or switch lane
    values: dict[str, dict[str, int]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CounterSnapshot:
    """The counters of one host's cabled interfaces, read in one round trip."""

    host: str
    taken: str  # ISO-8601, UTC
    ports: dict[str, PortCounters] = field(default_factory=dict)
    error: str | None = None  # the read failed as a whole (session, API)


@dataclass(frozen=True)
class CounterWindow:
    """Counter snapshots taken just before and just after the active probes of a run."""

    before: dict[str, CounterSnapshot]
    after: dict[str, CounterSnapshot]
    probes: tuple[str, ...] = ()  # what ran in between: "ping", "bandwidth", "nccl"
    wall_s: float = 0.0


@dataclass(frozen=True)
class Facts:
    """All facts of one run. `errors` maps a host to why it could not be read."""

    collected: str
    topology: str
    sparks: dict[str, SparkFacts] = field(default_factory=dict)
    switch: SwitchFacts | None = None
    errors: dict[str, str] = field(default_factory=dict)
    pings: tuple[PingFact, ...] = ()
    bandwidth: tuple[BandwidthFact, ...] = ()
    schedule: dict[str, Any] = field(default_factory=dict)
    nccl: tuple[NcclFact, ...] = ()  # nccl-tests results, when a probe ran them
    counters: CounterWindow | None = None  # counter snapshots around the active probes


@cache
def _adapter() -> TypeAdapter[Facts]:
    """Built on first use: a validation never loads recorded facts, and building the schema
    of every record costs its start-up about 20 ms."""
    return TypeAdapter(Facts)


def facts_to_json(facts: Facts) -> str:
    return json.dumps(asdict(facts), indent=2, sort_keys=True) + "\n"


def facts_from_json(text: str) -> Facts:
    """Load recorded facts (as written by `fabric facts --json`)."""
    return _adapter().validate_json(text)
