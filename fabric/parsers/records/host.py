"""Parsed records of a host's own state: PCIe links, BIOS, NetworkManager, logind, memory,
container images."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.parsers.records.base import Record


@dataclass(frozen=True)
class PcieLink(Record):
    """The PCIe link of one netdev's function (sysfs ``device/{current,max}_link_*``)."""

    netdev: str
    current_speed_gts: float | None
    current_width: int | None
    max_speed_gts: float | None
    max_width: int | None
    slot: str | None = None  # PCI address, e.g. "0000:01:00.0"


@dataclass(frozen=True)
class BiosInfo(Record):
    """``/sys/class/dmi/id/bios_{vendor,version,date}``; date as DMI writes it (MM/DD/YYYY)."""

    vendor: str | None
    version: str | None
    date: str | None


@dataclass(frozen=True)
class NmConnection(Record):
    """One NetworkManager profile (``nmcli -t -f NAME,UUID,TYPE,DEVICE connection show``);
    ``device`` None when the profile is not active on a device."""

    name: str
    uuid: str
    type: str
    device: str | None


@dataclass(frozen=True)
class ConfSetting(Record):
    """One ``Key=Value`` assignment of a systemd config (``systemd-analyze cat-config``), in
    the order systemd applies them (the last one wins)."""

    section: str | None
    key: str
    value: str
    file: str | None


@dataclass(frozen=True)
class MemInfo(Record):
    """``/proc/meminfo`` MemTotal and MemAvailable, in KiB."""

    mem_total_kib: int
    mem_available_kib: int


@dataclass(frozen=True)
class ContainerImage(Record):
    """One local container image (``docker image inspect``): its id, its tags, and the NCCL
    version its environment declares (``NCCL_VERSION``, as NVIDIA's CUDA and NGC images set
    it; None where it declares none)."""

    image_id: str
    tags: tuple[str, ...]
    nccl: str | None
