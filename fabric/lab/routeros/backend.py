"""What the emulator needs from the kernel of the switch namespace, plus an in-memory fake."""

from __future__ import annotations

import hashlib
import ipaddress
import queue
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from .lldp import build_frame, build_lldpdu
from .netlink import LinkEvent

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
    """A neighbour the fake kernel hears on ``interface``: one LLDP frame, sent when it is put
    in ``FakeBackend.neighbor_list`` (``interface_name``: its port id)."""

    interface: str
    identity: str = ""
    mac_address: str = ""
    interface_name: str = ""
    system_description: str = ""
    address: str = ""
    ttl: int = 120

    def frame(self) -> bytes:
        """The LLDP frame (chassis id and source: ``mac_address``, else one made up)."""
        mac = self.mac_address or _made_up_mac(self.identity + "/" + self.interface_name)
        try:
            address = str(ipaddress.ip_address(self.address)) if self.address else ""
        except ValueError:
            address = ""
        lldpdu = build_lldpdu(mac, self.interface_name or "port", self.ttl,
                              system_name=self.identity,
                              system_description=self.system_description,
                              management_address=address)  # fmt: skip
        return build_frame(mac, lldpdu)


def _made_up_mac(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return ":".join(f"{b:02X}" for b in (0x02, *digest[:5]))


class FrameSource(Protocol):
    """LLDP frames received in the switch namespace (see ``rawsock.PacketSource``)."""

    def recv(self, timeout: float) -> list[tuple[str, bytes]]:
        """(interface name at arrival, Ethernet frame), waiting up to ``timeout``."""

    def close(self) -> None: ...


class LinkSource(Protocol):
    """Link events of the switch namespace (see ``rawsock.NetlinkSource``)."""

    def dump(self, timeout: float = 5.0) -> list[LinkEvent]:
        """Every netdev as it is now."""

    def recv(self, timeout: float) -> list[LinkEvent]:
        """Events as they come, waiting up to ``timeout``."""

    def close(self) -> None: ...


class Backend(Protocol):
    """Kernel operations; ``KernelBackend`` runs ``ip``/``tc`` and opens sockets,
    ``FakeBackend`` none."""

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

    def open_lldp(self) -> FrameSource:
        """Start receiving LLDP frames from every interface of the namespace."""

    def open_links(self) -> LinkSource:
        """Start receiving link events of the namespace."""


_Item = TypeVar("_Item")


def _drain(items: queue.Queue[_Item | None], timeout: float) -> list[_Item]:
    """What the queue holds, waiting up to ``timeout`` for the first; None (a closed
    source's wake-up) ends it."""
    out: list[_Item] = []
    try:
        item = items.get(timeout=timeout)
        while item is not None:
            out.append(item)
            item = items.get_nowait()
    except queue.Empty:
        pass
    return out


class _QueueFrames:
    """The fake kernel's LLDP "socket": frames that tests (or ``neighbor_list``) made heard."""

    def __init__(self, frames: queue.Queue[tuple[str, bytes] | None]) -> None:
        self._frames = frames

    def recv(self, timeout: float) -> list[tuple[str, bytes]]:
        return _drain(self._frames, timeout)

    def close(self) -> None:
        self._frames.put(None)  # wakes the reader


class _QueueLinks:
    """The fake kernel's rtnetlink socket: its links now, then every carrier change/rename."""

    def __init__(self, backend: FakeBackend) -> None:
        self._backend = backend
        self.events: queue.Queue[LinkEvent | None] = queue.Queue()

    def dump(self, timeout: float = 5.0) -> list[LinkEvent]:
        return self._backend.link_events()

    def recv(self, timeout: float) -> list[LinkEvent]:
        return _drain(self.events, timeout)

    def close(self) -> None:
        self._backend.drop_source(self)
        self.events.put(None)


class FakeBackend:
    """In-memory kernel for unit tests: records every change, lets tests flip carrier/admin
    and move counters (``count``); a link that loses carrier counts a carrier down.

    LLDP and link events, for the API server's observer threads: ``hear(interface, frame)``
    delivers a frame as the kernel would (putting a ``Neighbor`` in ``neighbor_list`` hears
    its frame); every change of a link's carrier (``poke``) or name (``rename``) is an event.
    """

    def __init__(self, netdevs: dict[str, int] | None = None) -> None:
        self._links: dict[str, KernelLink] = {}
        self._index: dict[str, int] = {}
        self.shaping: dict[str, int] = {}
        self.stats: dict[str, dict[str, int]] = {}
        self.carrier_downs: dict[str, int] = {}
        self.queue_drops: dict[str, int] = {}
        self._neighbors: list[Neighbor] = []
        self.frames: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
        self.link_sources: list[_QueueLinks] = []
        self._events_lock = threading.Lock()
        self.calls: list[tuple[str, ...]] = []
        for index, (name, mtu) in enumerate((netdevs or {}).items(), start=1):
            mac = f"02:00:00:00:00:{index:02X}"
            self._add(KernelLink(name, mtu, True, True, mac, "veth"))

    def _add(self, link: KernelLink) -> None:
        self._links[link.name] = link
        self._index[link.name] = max(self._index.values(), default=0) + 1
        self._emit(link.name)

    def links(self) -> dict[str, KernelLink]:
        return dict(self._links)

    # --- LLDP and link events ------------------------------------------------------------------

    @property
    def neighbor_list(self) -> list[Neighbor]:
        """The neighbours made heard so far (a frame each; setting it again hears the new list,
        entries heard before stay until their TTL runs out, as on a real switch)."""
        return list(self._neighbors)

    @neighbor_list.setter
    def neighbor_list(self, neighbors: list[Neighbor]) -> None:
        self._neighbors = list(neighbors)
        for n in neighbors:
            self.hear(n.interface, n.frame())

    def hear(self, interface: str, frame: bytes) -> None:
        """A frame arrives on ``interface`` (the name it has at that moment)."""
        self.frames.put((interface, frame))

    def open_lldp(self) -> FrameSource:
        return _QueueFrames(self.frames)

    def open_links(self) -> LinkSource:
        source = _QueueLinks(self)
        with self._events_lock:
            self.link_sources.append(source)
        return source

    def drop_source(self, source: _QueueLinks) -> None:
        with self._events_lock:
            if source in self.link_sources:
                self.link_sources.remove(source)

    def _event(self, name: str, deleted: bool = False) -> LinkEvent:
        link = self._links.get(name)
        carrier = link is not None and link.admin_up and link.carrier and not deleted
        return LinkEvent(self._index[name], name, carrier, deleted)

    def link_events(self) -> list[LinkEvent]:
        """Every link as a dump reports it."""
        return [self._event(name) for name in self._links]

    def _emit(self, name: str, deleted: bool = False) -> None:
        with self._events_lock:
            event = self._event(name, deleted)
            for source in self.link_sources:
                source.events.put(event)

    def rename(self, old: str, new: str) -> None:
        """``ip link set OLD name NEW`` (the kernel refuses it while the link is up)."""
        if self._links[old].admin_up:
            raise RuntimeError(f"{old} is up: the kernel refuses to rename it (EBUSY)")
        self._links[new] = replace(self._links.pop(old), name=new)
        self._index[new] = self._index.pop(old)
        if old in self.stats:
            self.stats[new] = self.stats.pop(old)
        for table in (self.carrier_downs, self.queue_drops):
            if old in table:
                table[new] = table.pop(old)
        self._emit(new)

    def poke(self, name: str, **changes: object) -> None:
        """Change a link underneath the emulator, as ``ip link set`` would."""
        before = self._links[name]
        after = replace(before, **changes)  # type: ignore[arg-type]
        self._links[name] = after
        if before.admin_up and before.carrier and not (after.admin_up and after.carrier):
            self.carrier_downs[name] = self.carrier_downs.get(name, 0) + 1
        if (before.admin_up and before.carrier) != (after.admin_up and after.carrier):
            self._emit(name)

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
        self._add(KernelLink(name, 1500, True, True, "02:00:00:00:01:00", "bridge"))

    def del_link(self, name: str) -> None:
        self.calls.append(("del", name))
        if name in self._links:
            self._emit(name, deleted=True)
        self._links.pop(name, None)
        self._index.pop(name, None)
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
