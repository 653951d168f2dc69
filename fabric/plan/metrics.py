"""Fabric metrics: hop counts, bisection bandwidth, and an alpha-beta ring all-reduce time."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from fabric.errors import InputError
from fabric.plan.data import load
from fabric.plan.graph import Fabric, simple

EXACT_BISECTION_MAX = 12


@dataclass(frozen=True)
class Metrics:
    """What a fabric offers: size, hops between Sparks, bisection and all-reduce estimate."""

    name: str
    sparks: int
    switches: int
    ports_needed: int
    ports_available: int
    hops: dict[int, int]
    max_hops: int
    mean_hops: float
    bisection_gbps: float
    bisection_effective_gbps: float
    bisection_method: str
    size_bytes: int
    allreduce_ms: float
    allreduce_busbw_gbps: float
    ring_step_alpha_us: float
    ring_rank_gbps: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hops"] = {str(k): v for k, v in sorted(self.hops.items())}
        return d


def parse_size(text: str) -> int:
    """'268435456', '512M', '4G', '64K' -> bytes (powers of two)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if m is None:
        raise InputError(f"--size {text!r}: give bytes, or a number with K, M, G or T")
    scale = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[m[2].upper()]
    return int(float(m[1]) * scale)


def spark_distances(fab: Fabric) -> tuple[Counter[int], dict[tuple[str, str], int]]:
    """Histogram of hop counts over unordered Spark pairs; and the hops between ring
    neighbours (Sparks in order). Sparks hanging off the same switches share one BFS."""
    g = fab.graph
    sparks = set(fab.sparks)
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for s in fab.sparks:
        nbrs = frozenset(g.neighbors(s))
        key = nbrs if nbrs and not (nbrs & sparks) else frozenset({s})
        groups[key].append(s)
    hist: Counter[int] = Counter()
    dist_of: dict[str, dict[str, int]] = {}
    group_of: dict[str, frozenset[str]] = {}
    for key, members in groups.items():
        dist = nx.single_source_shortest_path_length(g, members[0])
        for m in members:
            dist_of[m] = dist
            group_of[m] = key
        n = len(members)
        if n > 1:
            hist[2] += n * (n - 1) // 2
        for other, d in dist.items():
            if other in sparks and group_of.get(other) != key and other in dist_of:
                hist[d] += n
    ring: dict[tuple[str, str], int] = {}
    order = list(fab.sparks)
    for a, b in zip(order, order[1:] + order[:1], strict=True):
        if a == b:
            continue
        if group_of[a] == group_of[b] and len(group_of[a]) > 1 and not (
                group_of[a] & {a}):
            ring[(a, b)] = 2
        else:
            ring[(a, b)] = dist_of[a].get(b, -1)
    return hist, ring


def bisection(fab: Fabric) -> tuple[float, str]:
    """Smallest cut between two halves of the Sparks (exact when small; else halves in order)."""
    sparks = list(fab.sparks)
    if len(sparks) < 2:
        return 0.0, "n/a"
    g = simple(fab.graph)
    half = len(sparks) // 2
    if len(sparks) <= EXACT_BISECTION_MAX:
        best = float("inf")
        first, rest = sparks[0], sparks[1:]
        for combo in itertools.combinations(rest, half - 1):
            side = {first, *combo}
            best = min(best, _cut(g, side, set(sparks) - side))
        return best, "exact (every balanced split)"
    return _cut(g, set(sparks[:half]), set(sparks[half:])), "cut between the halves in order"


def _cut(g: nx.Graph, a: set[str], b: set[str]) -> float:
    flow = nx.DiGraph()
    for u, v, d in g.edges(data=True):
        flow.add_edge(u, v, capacity=float(d["gbps"]))
        flow.add_edge(v, u, capacity=float(d["gbps"]))
    for s in a:
        flow.add_edge("__src__", s)
    for t in b:
        flow.add_edge(t, "__dst__")
    if not (a and b):
        return 0.0
    value: float = nx.maximum_flow_value(flow, "__src__", "__dst__")
    return value


def allreduce(fab: Fabric, size: int, ring_hops: dict[tuple[str, str], int]
              ) -> tuple[float, float, float, float]:
    """Ring all-reduce: (ms, bus bandwidth Gb/s, alpha per step us, bandwidth per rank Gb/s)."""
    ab = load("alpha_beta")
    p = len(fab.sparks)
    if p < 2 or any(h < 0 for h in ring_hops.values()):
        return float("inf") if p >= 2 else 0.0, 0.0, 0.0, 0.0
    worst = max(ring_hops.values(), default=1)
    switches_crossed = max(0, worst - 1)
    alpha = (ab["alpha_us"] + ab["hop_latency_us"]["direct"]
             + ab["hop_latency_us"]["switch"] * switches_crossed)
    g = fab.graph
    rank_gbps = min(max(d["gbps"] for _, _, d in g.edges(s, data=True)) for s in fab.sparks)
    rank_gbps = min(rank_gbps, _uplink_share(fab)) * float(ab["link_efficiency"])
    ms, busbw = ring_allreduce(p, size, alpha, rank_gbps)
    return ms, busbw, alpha, rank_gbps


def ring_allreduce(ranks: int, size: int, alpha_us: float, rank_gbps: float
                   ) -> tuple[float, float]:
    """The alpha-beta ring all-reduce of `size` bytes over `ranks`: (ms, bus Gb/s)."""
    steps = 2 * (ranks - 1)
    seconds = steps * alpha_us * 1e-6 + steps / ranks * size * 8 / (rank_gbps * 1e9)
    return seconds * 1e3, steps / ranks * size * 8 / seconds / 1e9


def _uplink_share(fab: Fabric) -> float:
    """A ring laid out leaf by leaf crosses each leaf's uplinks once each way."""
    g = fab.graph
    shares = []
    for sw in fab.switches:
        up = sum(d["gbps"] for _, n, d in g.edges(sw, data=True)
                 if g.nodes[n]["role"] == "switch")
        if up:
            shares.append(up)
    return min(shares, default=float("inf"))


def analyse(fab: Fabric, size: int) -> Metrics:
    """Every metric for one fabric and message size."""
    hist, ring = spark_distances(fab)
    bis, method = bisection(fab)
    eff = float(load("alpha_beta")["link_efficiency"])
    ms, busbw, alpha, rank = allreduce(fab, size, ring)
    pairs = sum(hist.values())
    mean = sum(k * v for k, v in hist.items()) / pairs if pairs else 0.0
    return Metrics(fab.name, len(fab.sparks), len(fab.switches), fab.ports_needed,
                   fab.ports_available, dict(hist), max(hist, default=0), round(mean, 3),
                   bis, round(bis * eff, 1), method, size, round(ms, 3), round(busbw, 1),
                   round(alpha, 2), round(rank, 1))
