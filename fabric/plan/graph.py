"""A fabric as an analysable graph: Sparks, switches, cables with capacities.

Built from an Intent or generated (synth); metrics and what-if work on both alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from fabric.intent.model import Intent
from fabric.plan.switchcmd import port_of


@dataclass(frozen=True)
class Fabric:
    """Nodes carry `role` (spark|switch) and `ups`; edges (key = link id) carry `gbps`
    and, on switch lanes, `group` (`switch:port`, the port group that restarts together)."""

    name: str
    kind: str
    graph: nx.MultiGraph
    sparks: tuple[str, ...]
    switches: tuple[str, ...]
    ports_needed: int = 0
    ports_available: int = 0


def from_intent(intent: Intent) -> Fabric:
    """The intent's cabling as a Fabric."""
    g = nx.MultiGraph()
    for name in intent.graph.nodes:
        h = intent.hosts[name]
        g.add_node(name, role=h.role, ups=h.ups)
    for link in intent.links:
        port = port_of(intent, link)
        group = f"{intent.switch.host}:{port}" if port and intent.switch else None
        g.add_edge(link.a.host, link.b.host, key=link.id, gbps=link.speed_gbps, group=group)
    switches = tuple(n for n, d in g.nodes(data=True) if d["role"] == "switch")
    needed = available = 0
    if intent.switch is not None:
        from fabric.plan.capacity import capacity_of

        cap = capacity_of(intent)
        needed, available = cap.needed, cap.available
    return Fabric(intent.name, intent.kind, g, tuple(h.name for h in intent.sparks), switches,
                  needed, available)


def simple(graph: nx.MultiGraph) -> nx.Graph:
    """Parallel cables merged, capacities summed (for cuts and flows)."""
    out = nx.Graph()
    out.add_nodes_from(graph.nodes(data=True))
    for a, b, d in graph.edges(data=True):
        if out.has_edge(a, b):
            out[a][b]["gbps"] += d["gbps"]
        else:
            out.add_edge(a, b, gbps=d["gbps"])
    return out
