"""What the emulator needs from the kernel of the switch namespace, plus an in-memory fake."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol


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

    def set_mtu(self, name: str, mtu: int) -> None: ...

    def set_admin(self, name: str, up: bool) -> None: ...

    def add_bridge(self, name: str) -> None: ...

    def del_link(self, name: str) -> None: ...

    def set_master(self, name: str, master: str | None) -> None: ...

    def shape(self, name: str, mbit: int | None) -> None:
        """Install a root tbf qdisc at ``mbit`` Mbit/s, or remove it when None."""

    def neighbors(self) -> list[Neighbor]: ...


class FakeBackend:
    """In-memory kernel for unit tests: records every change, lets tests flip carrier/admin."""

    def __init__(self, netdevs: dict[str, int] | None = None) -> None:
        self._links: dict[str, KernelLink] = {}
        self.shaping: dict[str, int] = {}
        self.neighbor_list: list[Neighbor] = []
        self.calls: list[tuple[str, ...]] = []
        for index, (name, mtu) in enumerate((netdevs or {}).items(), start=1):
            mac = f"02:00:00:00:00:{index:02X}"
            self._links[name] = KernelLink(name, mtu, True, True, mac, "veth")

    def links(self) -> dict[str, KernelLink]:
        return dict(self._links)

    def poke(self, name: str, **changes: object) -> None:
        """Change a link underneath the emulator, as ``ip link set`` would."""
        self._links[name] = replace(self._links[name], **changes)  # type: ignore[arg-type]

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
