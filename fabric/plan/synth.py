"""Synthetic multi-switch fabrics: CRS804 leaves (2x200G host ports) under high-radix spines,
built in memory for a given size and leaf oversubscription, then planned and analysed."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from fabric.errors import InputError
from fabric.intent.platforms import spark_port_gbps, switch_model
from fabric.plan.data import load
from fabric.plan.graph import Fabric
from fabric.plan.metrics import analyse


@dataclass(frozen=True)
class LeafSpine:
    """The bill of materials of a leaf-spine fabric."""

    nodes: int
    leaves: int
    spines: int
    host_ports_per_leaf: int
    uplinks_per_leaf: int
    hosts_per_leaf: int
    oversubscription: float
    host_cables: int
    uplink_cables: int
    spine_ports_used: int
    spine_ports_available: int


def design(nodes: int, oversub: float) -> LeafSpine:
    """Pick host/uplink ports per leaf for the wanted oversubscription; refuse what cannot fit."""
    cfg = load("synth")
    leaf = switch_model(cfg["leaf_model"])
    mode = leaf.modes[cfg["leaf_host_mode"]]
    per_port = len(mode.first_lanes)
    gbps, up_gbps = spark_port_gbps(), int(cfg["uplink_gbps"])
    best: tuple[int, int] | None = None
    for host_ports in range(leaf.ports - 1, 0, -1):
        up = leaf.ports - host_ports
        ratio = host_ports * per_port * gbps / (up * up_gbps)
        if ratio <= oversub + 1e-9:
            best = (host_ports, up)
            break
    if best is None:
        raise InputError(f"oversubscription {oversub:g} is below what a {leaf.name} leaf can "
                         "reach with at least one host port; use a value >= "
                         f"{per_port * gbps / ((leaf.ports - 1) * up_gbps):g}")
    host_ports, up = best
    per_leaf = host_ports * per_port
    leaves = math.ceil(nodes / per_leaf)
    spine_ports = int(cfg["spine"]["ports"])
    spines = up
    if leaves > spine_ports:
        raise InputError(f"{leaves} leaves exceed the spine radix ({spine_ports} ports): a "
                         "two-tier fabric cannot reach them; options: a larger spine "
                         "(fabric/plan/synth.yaml), a higher --oversub (more hosts per leaf), "
                         "or fewer nodes")
    ratio = per_leaf * gbps / (up * up_gbps)
    return LeafSpine(nodes, leaves, spines, host_ports, up, per_leaf, round(ratio, 3), nodes,
                     leaves * up, leaves, spines * spine_ports)


def build(bom: LeafSpine) -> Fabric:
    """The leaf-spine graph: every leaf has one uplink to each spine."""
    cfg = load("synth")
    g = nx.MultiGraph()
    gbps, up_gbps = spark_port_gbps(), int(cfg["uplink_gbps"])
    spines = [f"spine{s + 1:02d}" for s in range(bom.spines)]
    for s in spines:
        g.add_node(s, role="switch", ups=None)
    sparks: list[str] = []
    leaves: list[str] = []
    for leaf_i in range(bom.leaves):
        leaf = f"leaf{leaf_i + 1:03d}"
        leaves.append(leaf)
        g.add_node(leaf, role="switch", ups=None)
        for s in spines:
            g.add_edge(leaf, s, key=f"{leaf}--{s}", gbps=up_gbps, group=None)
        for h in range(bom.hosts_per_leaf):
            n = leaf_i * bom.hosts_per_leaf + h
            if n >= bom.nodes:
                break
            name = f"spark{n + 1:04d}"
            sparks.append(name)
            g.add_node(name, role="spark", ups=None)
            port = h // (bom.hosts_per_leaf // bom.host_ports_per_leaf) + 1
            g.add_edge(name, leaf, key=f"{name}:p0--{leaf}:qsfp56-dd-{port}-{h % 2 * 4 + 1}",
                       gbps=gbps, group=f"{leaf}:qsfp56-dd-{port}")
    return Fabric(f"leafspine{bom.nodes}", "leaf-spine", g, tuple(sparks),
                  tuple(leaves + spines), bom.nodes, bom.leaves * bom.hosts_per_leaf)


def spof_summary(fab: Fabric) -> dict[str, int]:
    """Single points of failure by structure: cut vertices and bridges between switches."""
    g = nx.Graph(fab.graph)
    cut = [n for n in nx.articulation_points(g) if g.nodes[n]["role"] == "switch"]
    bridges = [e for e in nx.bridges(g) if all(g.nodes[n]["role"] == "switch" for n in e)]
    return {"switches_isolating_sparks": len(cut), "switch_to_switch_bridges": len(bridges),
            "spark_cables_each_isolating_one_spark": len(fab.sparks)}


def plan_and_analyse(nodes: int, oversub: float, size: int) -> dict[str, Any]:
    """Design, build and analyse one fabric; timings included."""
    t0 = time.perf_counter()
    bom = design(nodes, oversub)
    fab = build(bom)
    t1 = time.perf_counter()
    metrics = analyse(fab, size)
    spof = spof_summary(fab)
    t2 = time.perf_counter()
    return {"design": asdict(bom), "metrics": metrics.to_dict(), "spof": spof,
            "seconds": {"plan": round(t1 - t0, 4), "analyse": round(t2 - t1, 4),
                        "total": round(t2 - t0, 4)}}
