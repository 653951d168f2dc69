"""What the emulator needs from the kernel of the switch namespace, plus an in-memory fake."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

#: The kernel's per-netdev counters (``struct rtnl_link_stats64``, as ``ip -s -s -j link``
#: groups them under ``stats64.rx``/``stats64.tx``), named ``rx_<field>``/``tx_<field>``.
STATS64_FIELDS = (
    "rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "rx_over_errors", "rx_multicast",
    "rx_length_errors", "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors",
    "rx_missed_errors", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped",
    "tx_carrier_errors", "tx_collisions", "tx_aborted_errors", "tx_fifo_errors",
    "tx_window_errors", "tx_heartbeat_errors", "tx_carrier_changes",
)  # fmt: skip


@dataclass(frozen=True)
class KernelLink:
    """One netdev as ``ip -j link`` shows it."""

    name: str
    mtu: int
    admin_up: bool
    carrier: bool
    mac: str = ""
    kind: str = ""
    master: str | None = None


@dataclass(frozen=True)
class KernelCounters:
    """One netdev's counters as the kernel keeps them, read afresh on every request.

    ``stats``: stats64 (``rx_bytes``, ``tx_dropped``, ...; see ``STATS64_FIELDS``);
    ``carrier_down_count``: /sys/class/net/<dev>/carrier_down_count; ``queue_drops``: the drops
    of the netdev's root qdisc (``tc -s qdisc``). None: the kernel did not say (never 0).
    """

    name: str
    stats: Mapping[str, int] = field(default_factory=dict)
    carrier_down_count: int | None = None
    queue_drops: int | None = None


@dataclass(frozen=True)
class Neighbor:
    """One LLDP neighbour as lldpd reports it."""

    interface: str
    identity: str = ""
    mac_address: str = ""
    interface_name: str = ""
    system_description: str = ""
    address: str = ""


class Backend(Protocol):
    """Kernel operations; ``KernelBackend`` runs ``ip``/``tc``/``lldpcli``, ``FakeBackend`` none."""

    def links(self) -> dict[str, KernelLink]: ...

    def counters(self) -> dict[str, KernelCounters]:
        """Every netdev's counters (stats64, carrier downs, root qdisc drops), by name."""

    def set_mtu(self, name: str, mtu: int) -> None: ...

    def set_admin(self, name: str, up: bool) -> None: ...

    def add_bridge(self, name: str) -> None: ...

    def del_link(self, name: str) -> None: ...

    def set_master(self, name: str, master: str | None) -> None: ...

    def shape(self, name: str, mbit: int | None) -> None:
        """Install a root tbf qdisc at ``mbit`` Mbit/s, or remove it when None."""

    def neighbors(self) -> list[Neighbor]: ...


class FakeBackend:
    """In-memory kernel for unit tests: records every change, lets tests flip carrier/admin
    and move counters (``count``); a link that loses carrier counts a carrier down."""

    def __init__(self, netdevs: dict[str, int] | None = None) -> None:
        self._links: dict[str, KernelLink] = {}
        self.shaping: dict[str, int] = {}
        self.stats: dict[str, dict[str, int]] = {}
        self.carrier_downs: dict[str, int] = {}
        self.queue_drops: dict[str, int] = {}
        self.neighbor_list: list[Neighbor] = []
        self.calls: list[tuple[str, ...]] = []
        for index, (name, mtu) in enumerate((netdevs or {}).items(), start=1):
            mac = f"02:00:00:00:00:{index:02X}"
            self._links[name] = KernelLink(name, mtu, True, True, mac, "veth")

    def links(self) -> dict[str, KernelLink]:
        return dict(self._links)

    def poke(self, name: str, **changes: object) -> None:
        """Change a link underneath the emulator, as ``ip link set`` would."""
        before = self._links[name]
        after = replace(before, **changes)  # type: ignore[arg-type]
        self._links[name] = after
        if before.admin_up and before.carrier and not (after.admin_up and after.carrier):
            self.carrier_downs[name] = self.carrier_downs.get(name, 0) + 1

    def count(self, name: str, **values: int) -> None:
        """Set counters of ``name`` (stats64 fields, or ``queue_drops``), as traffic would."""
        for key, value in values.items():
            if key == "queue_drops":
                self.queue_drops[name] = value
            elif key in STATS64_FIELDS:
                self.stats.setdefault(name, {})[key] = value
            else:
                raise KeyError(f"no kernel counter {key!r}")

    def counters(self) -> dict[str, KernelCounters]:
        return {
            name: KernelCounters(
                name,
                {f: self.stats.get(name, {}).get(f, 0) for f in STATS64_FIELDS},
                self.carrier_downs.get(name, 0),
                self.queue_drops.get(name, 0),
            )
            for name in self._links
        }

    def set_mtu(self, name: str, mtu: int) -> None:
        self.calls.append(("mtu", name, str(mtu)))
        self.poke(name, mtu=mtu)

    def set_admin(self, name: str, up: bool) -> None:
        self.calls.append(("admin", name, "up" if up else "down"))
        self.poke(name, admin_up=up)

    def add_bridge(self, name: str) -> None:
        self.calls.append(("add-bridge", name))
        self._links[name] = KernelLink(name, 1500, True, True, "02:00:00:00:01:00", "bridge")

    def del_link(self, name: str) -> None:
        self.calls.append(("del", name))
        self._links.pop(name, None)
        for table in (self.stats, self.carrier_downs, self.queue_drops):
            table.pop(name, None)  # a netdev made again starts from zero, as in the kernel
        for other, link in list(self._links.items()):
            if link.master == name:
                self._links[other] = replace(link, master=None)

    def set_master(self, name: str, master: str | None) -> None:
        self.calls.append(("master", name, master or "nomaster"))
        self.poke(name, master=master)

    def shape(self, name: str, mbit: int | None) -> None:
        self.calls.append(("shape", name, str(mbit)))
        if mbit is None:
            self.shaping.pop(name, None)
        else:
            self.shaping[name] = mbit

    def neighbors(self) -> list[Neighbor]:
        return list(self.neighbor_list)
