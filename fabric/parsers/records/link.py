"""Parsed records: ethtool, iproute2 and the counters (ip -s -s -j link, sysfs hw_counters)."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.parsers.records.base import Record

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
