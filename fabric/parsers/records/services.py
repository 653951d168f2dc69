"""Parsed records: LLDP, chrony, QoS (mlnx_qos), iptables, RouterOS commands and dmesg."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.parsers.records.base import Record

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
