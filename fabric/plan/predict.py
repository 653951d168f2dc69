"""What a migration gives each node: its bandwidth before and after, and the planner's
all-reduce prediction (alpha-beta ring, `alpha_beta.yaml`) for the TP and DP groups."""

from __future__ import annotations

from fabric.intent.model import Intent
from fabric.plan.data import load
from fabric.plan.graph import from_intent
from fabric.plan.metrics import analyse, ring_allreduce


def _node_gbps(intent: Intent) -> dict[str, int]:
    """Each cabled Spark's fastest cable (what one rank can move)."""
    out: dict[str, int] = {}
    for link in intent.links:
        for ep in link.ends():
            if intent.hosts[ep.host].role == "spark":
                out[ep.host] = max(out.get(ep.host, 0), link.speed_gbps)
    return out


def _change(before: int, after: int) -> str:
    if after == before:
        return "unchanged"
    if after * 2 == before:
        return "halves"
    if after == before * 2:
        return "doubles"
    return f"x{after / before:.2g}"


def prediction(src: Intent, dst: Intent) -> list[str]:
    """Lines for the runbook: per-node bandwidth, then TP and DP groups before and after."""
    size = int(load("alpha_beta")["default_size_bytes"])
    a, b = analyse(from_intent(src), size), analyse(from_intent(dst), size)
    old, new = _node_gbps(src), _node_gbps(dst)
    kept = sorted(set(old) & set(new))
    lines = []
    if kept:
        pairs = sorted({(old[n], new[n]) for n in kept})
        lines += [f"bandwidth per node: {x}G → {y}G ({_change(x, y)}) on "
                  f"{', '.join(n for n in kept if (old[n], new[n]) == (x, y))}"
                  for x, y in pairs]
    mib = size // 2**20
    lines.append(f"TP across every node: {a.sparks} ranks, {a.allreduce_ms:.1f} ms per "
                 f"{mib} MiB all-reduce ({a.allreduce_busbw_gbps:.0f} Gb/s bus) → {b.sparks} "
                 f"ranks, {b.allreduce_ms:.1f} ms ({b.allreduce_busbw_gbps:.0f} Gb/s bus)")
    if b.sparks > a.sparks >= 2 and b.ring_rank_gbps > 0:
        ms, bus = ring_allreduce(a.sparks, size, b.ring_step_alpha_us, b.ring_rank_gbps)
        lines.append(f"or keep TP at {a.sparks} ranks and add DP: {b.sparks // a.sparks} "
                     f"replicas of TP{a.sparks}, each {ms:.1f} ms per {mib} MiB all-reduce "
                     f"({bus:.0f} Gb/s bus; {a.allreduce_ms:.1f} ms on {src.name})")
    lines.append("predictions from the alpha-beta model (fabric/plan/alpha_beta.yaml), not "
                 "measurements: fabric validate's nccl family measures them")
    return lines
