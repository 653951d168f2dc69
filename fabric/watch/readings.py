"""What one cycle read from one host: typed, before it becomes samples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabric.facts import CounterSnapshot
from fabric.parsers.records import LldpNeighbor

Row = dict[str, Any]


@dataclass(frozen=True)
class LinkState:
    """A Spark netdev's sysfs state: MTU, speed (Mb/s, None when the kernel has none),
    carrier, and the kernel's carrier up/down counts."""

    mtu: int | None
    speed_mbps: int | None
    carrier: bool
    carrier_up: int | None
    carrier_down: int | None


@dataclass(frozen=True)
class SparkReading:
    """A Spark's twins (sysfs state, counters), its GPUs: index -> (°C, W), None where
    nvidia-smi is missing or reports N/A, and lldpd's neighbours (None: not read)."""

    host: str
    links: dict[str, LinkState]
    counters: CounterSnapshot
    gpus: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    neighbors: tuple[LldpNeighbor, ...] | None = None


@dataclass(frozen=True)
class SwitchReading:
    """`/interface` and `/interface/ethernet` rows by lane (print stats), `/ip/neighbor`, the
    cabled lanes' `monitor once` and `/system/health`."""

    host: str
    interface: dict[str, Row]
    ethernet: dict[str, Row]
    neighbors: list[Row] = field(default_factory=list)
    monitor: dict[str, Row] = field(default_factory=dict)  # `monitor once` by lane
    health: list[Row] = field(default_factory=list)  # /system/health


@dataclass(frozen=True)
class HostStatus:
    """How the last read of a host went: `up`, its duration, why it failed (logged, never a
    label), and the counts since watch started."""

    host: str
    up: bool
    seconds: float
    error: str | None = None
    kind: str = ""  # "timeout" | "connect" | "read" when not up
    failures: dict[str, int] = field(default_factory=dict)
    connects: int = 0
