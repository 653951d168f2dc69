"""The intent: typed records for hosts, cables and rails, and the networkx graph they make.

The graph (`Intent.graph`) is built, and networkx imported, on first use: a validation or a
push only walks the records, and networkx costs a command's start-up about 0.08 s."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from fabric.intent.profiles import LinkProfile

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Twin:
    """One of the two netdevs (and RDMA devices) a ConnectX-7 QSFP port shows to Linux."""

    netdev: str
    rdma: str


@dataclass(frozen=True)
class Endpoint:
    """One end of a cable, as the topology names it (`host:port`)."""

    host: str
    port: str

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class RailEnd:
    """A twin's side of a rail: the netdev and its planned address (None on the switch)."""

    host: str
    netdev: str
    rdma: str | None
    address: ipaddress.IPv4Interface | None


@dataclass(frozen=True)
class Rail:
    """One twin's path over a cable: twin index (0 = A, 1 = B), its subnet, its two ends."""

    twin: int
    subnet: ipaddress.IPv4Network
    a: RailEnd
    b: RailEnd


@dataclass(frozen=True)
class Link:
    """A physical cable. `id` is `a--b` as the topology names the ends (report contract)."""

    id: str
    a: Endpoint
    b: Endpoint
    speed_gbps: int
    cable: str
    rails: tuple[Rail, ...]
    switch_lane: str | None = None
    line: int | None = None

    def ends(self) -> tuple[Endpoint, Endpoint]:
        return (self.a, self.b)

    def end_of(self, host: str) -> Endpoint:
        return self.a if self.a.host == host else self.b

    def peer_of(self, host: str) -> Endpoint:
        return self.b if self.a.host == host else self.a


@dataclass(frozen=True)
class Host:
    """An inventory host as the intent sees it."""

    name: str
    role: str
    hostname: str | None
    platform: str | None
    status: str
    ups: str | None
    node_id: int | None = None
    mgmt_interface: str | None = None
    model: str | None = None
    ports: dict[str, tuple[Twin, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class InterfaceIntent:
    """What one Spark netdev should look like: address, MTU, which cable it rides."""

    host: str
    netdev: str
    rdma: str
    port: str
    twin: int
    address: ipaddress.IPv4Interface
    mtu: int
    link_id: str
    peer: RailEnd


@dataclass(frozen=True)
class LanePlan:
    """What one switch lane should look like."""

    name: str
    port: str
    mode: str
    speed: str
    auto_negotiation: bool
    fec_mode: str
    gbps: int
    cabled_to: str | None
    link_id: str | None


@dataclass(frozen=True)
class SwitchPlan:
    """The switch side of the intent: the lanes in use, MTU, the offloaded bridge."""

    host: str
    model: str
    bridge: str
    mtu: int
    l2mtu: int
    max_l2mtu: int
    lanes: tuple[LanePlan, ...]
    port_modes: dict[str, str]


@dataclass(frozen=True)
class Intent:
    """Everything the operator declared, resolved: graph, addresses, expectations."""

    name: str
    description: str
    topology_file: str
    mtu: int
    profile: LinkProfile
    kind: str  # "ring", "star" or "mesh"
    hosts: dict[str, Host]
    links: tuple[Link, ...]
    switch: SwitchPlan | None
    qos: str = "lossy"  # "lossy" | "lossless" (topology `qos:`)

    @cached_property
    def cabled(self) -> tuple[str, ...]:
        """Names of the hosts with a cable in this topology, sorted (the graph's nodes)."""
        return tuple(sorted({e.host for link in self.links for e in link.ends()}))

    @cached_property
    def graph(self) -> nx.MultiGraph:
        """The cabled hosts as nodes (role, ups, status, node_id) and each cable as an edge
        keyed by its id (`link`, and `ports` per end), built on first use."""
        import networkx as nx

        graph = nx.MultiGraph(name=self.name)
        for name in self.cabled:
            h = self.hosts[name]
            graph.add_node(name, role=h.role, ups=h.ups, status=h.status, node_id=h.node_id)
        for link in self.links:
            graph.add_edge(link.a.host, link.b.host, key=link.id, link=link,
                           ports={link.a.host: link.a.port, link.b.host: link.b.port}
                           if link.a.host != link.b.host else {})
        return graph

    @property
    def lossless(self) -> bool:
        """Whether the topology asks for lossless RoCE at both ends (switch and Sparks)."""
        return self.qos == "lossless"

    @property
    def sparks(self) -> list[Host]:
        """Sparks that have a cable in this topology, by node id."""
        used = set(self.cabled)
        return sorted((h for h in self.hosts.values() if h.role == "spark" and h.name in used),
                      key=lambda h: (h.node_id or 0, h.name))

    def link(self, link_id: str) -> Link:
        for link in self.links:
            if link.id == link_id:
                return link
        raise KeyError(link_id)

    def links_of(self, host: str) -> list[Link]:
        return [link for link in self.links if host in (link.a.host, link.b.host)]

    def interfaces(self, host: str | None = None) -> list[InterfaceIntent]:
        """The planned fabric netdevs (of one host, or all), in a stable order."""
        return [i for i in self._interfaces if host is None or i.host == host]

    @cached_property
    def _interfaces(self) -> tuple[InterfaceIntent, ...]:
        """Every planned fabric netdev, made once (the links are frozen): the checks ask for
        them per port and per ping, 106 times in a star16 validation."""
        return tuple(self._iter_interfaces())

    def _iter_interfaces(self) -> Iterator[InterfaceIntent]:
        for link in self.links:
            for rail in link.rails:
                for end, peer, ep in ((rail.a, rail.b, link.a), (rail.b, rail.a, link.b)):
                    if end.address is None or end.rdma is None:
                        continue
                    yield InterfaceIntent(end.host, end.netdev, end.rdma, ep.port, rail.twin,
                                        end.address, self.mtu, link.id, peer)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (used by `topo show --format json` and the intent hash). `qos`
        appears only when lossless, so a lossy topology keeps the hash it always had."""
        out: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "mtu": self.mtu,
            "profile": self.profile.name,
            "hosts": [
                {"name": h.name, "role": h.role, "status": h.status, "ups": h.ups,
                 "node_id": h.node_id}
                for h in sorted(self.hosts.values(), key=lambda h: h.name)
                if h.name in self.cabled
            ],
            "links": [
                {"id": link.id, "a": str(link.a), "b": str(link.b), "speed_gbps": link.speed_gbps,
                 "cable": link.cable, "switch_lane": link.switch_lane,
                 "rails": [{"twin": "AB"[r.twin], "subnet": str(r.subnet),
                            "a": _end_dict(r.a), "b": _end_dict(r.b)} for r in link.rails]}
                for link in self.links
            ],
            "switch": None if self.switch is None else {
                "host": self.switch.host, "bridge": self.switch.bridge, "mtu": self.switch.mtu,
                "l2mtu": self.switch.l2mtu, "port_modes": self.switch.port_modes,
                "lanes": [asdict(lane) for lane in self.switch.lanes],
            },
        }
        if self.lossless:
            out["qos"] = self.qos
        return out

    @property
    def intent_hash(self) -> str:
        """A stable hash of the resolved intent; reports carry it, the gate compares it."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _end_dict(end: RailEnd) -> dict[str, Any]:
    return {"host": end.host, "netdev": end.netdev, "rdma": end.rdma,
            "address": None if end.address is None else str(end.address)}
