"""What still works when one element fails: a node, a cable, the switch, a port group,
a UPS group. `spofs` fails each element in turn and keeps the single points of failure."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from fabric.errors import InputError, InputProblem
from fabric.intent.model import Intent
from fabric.plan.graph import Fabric
from fabric.plan.metrics import bisection

GATEWAY_ROLE = "management"


@dataclass(frozen=True)
class WhatIf:
    """The answer for one failed TARGET."""

    topology: str
    target: str
    kind: str
    lost_hosts: tuple[str, ...]
    lost_links: tuple[str, ...]
    sparks_left: tuple[str, ...]
    components: tuple[tuple[str, ...], ...]
    connected: bool
    tp: int
    tp_groups: int
    tp_possible: bool
    dp_replicas: int
    dp_of: int
    bisection_gbps: float
    bisection_before_gbps: float
    notes: tuple[str, ...]

    @property
    def spof(self) -> bool:
        """True when the failure leaves no TP group of the wanted size, or nothing served."""
        return not self.tp_possible or self.dp_replicas == 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "spof": self.spof}


def resolve(fab: Fabric, intent: Intent, target: str) -> tuple[str, set[str], set[str]]:
    """TARGET -> (kind, hosts lost, link ids lost); InputError names what was expected."""
    g = fab.graph
    ups_groups = sorted({h.ups for h in intent.hosts.values() if h.ups})
    if target in ups_groups:
        hosts = {h.name for h in intent.hosts.values() if h.ups == target
                 and (h.name in g or h.role == GATEWAY_ROLE)}
        return "ups", hosts, set()
    if target in g.nodes:
        return ("switch" if g.nodes[target]["role"] == "switch" else "node"), {target}, set()
    links = {k for _, _, k in g.edges(keys=True)}
    if target in links:
        return "cable", set(), {target}
    groups = {d["group"] for _, _, d in g.edges(data=True) if d.get("group")}
    if target in groups:
        return "port-group", set(), {k for _, _, k, d in g.edges(keys=True, data=True)
                                      if d.get("group") == target}
    if ":" in target:
        hits = {link.id for link in intent.links if target in (str(link.a), str(link.b))}
        if hits:
            return "cable", set(), hits
    raise InputError(InputProblem(
        intent.topology_file, None, "--fail",
        f"{target!r}: not a node, switch, cable (link id or host:port), "
                     f"switch port group ({', '.join(sorted(groups)) or 'none'}) or UPS group "
                     f"({', '.join(ups_groups)}) of {fab.name}"))


def fail(fab: Fabric, intent: Intent, target: str, kind: str, hosts: set[str],
         links: set[str], tp: int) -> WhatIf:
    """Remove the hosts and links; judge what is left."""
    g = fab.graph.copy()
    g.remove_nodes_from([h for h in hosts if h in g])
    g.remove_edges_from([(a, b, k) for a, b, k in list(g.edges(keys=True)) if k in links])
    left = tuple(s for s in fab.sparks if s in g)
    comps = sorted((tuple(s for s in left if s in c) for c in nx.connected_components(g)),
                   key=lambda c: (-len(c), c))
    comps = [c for c in comps if c]
    groups = sum(len(c) // tp for c in comps)
    notes: list[str] = []
    gateway = [h.name for h in intent.hosts.values() if h.role == GATEWAY_ROLE]
    lost_gw = [h for h in gateway if h in hosts]
    dp = 0 if lost_gw else len(left)
    if lost_gw:
        notes.append(f"{', '.join(lost_gw)} (API gateway, balancer) is lost: nothing is served "
                     "until it is back, whatever the fabric")
    if fab.kind == "ring" and comps and len(comps[0]) == len(left) and links:
        notes.append("the ring is broken: the NCCL ring now closes through a Spark's "
                     "forwarding (needs FORWARD ACCEPT; the longest hop path grows)")
    sub = Fabric(fab.name, fab.kind, g, left, tuple(s for s in fab.switches if s in g))
    return WhatIf(fab.name, target, kind, tuple(sorted(hosts & set(fab.graph.nodes)
                                                       | (hosts - set(fab.graph.nodes)))),
                  tuple(sorted(links)), left, tuple(comps), len(comps) <= 1, tp, groups,
                  groups > 0, dp, len(fab.sparks), bisection(sub)[0], bisection(fab)[0],
                  tuple(notes))


def fail_target(fab: Fabric, intent: Intent, target: str, tp: int) -> WhatIf:
    """The what-if for one TARGET string."""
    kind, hosts, links = resolve(fab, intent, target)
    return fail(fab, intent, target, kind, hosts, links, tp)


def candidates(fab: Fabric, intent: Intent) -> list[str]:
    """Every element that can fail on its own: nodes, switches, port groups, cables, UPS."""
    g = fab.graph
    groups = sorted({d["group"] for _, _, d in g.edges(data=True) if d.get("group")})
    ups = sorted({h.ups for h in intent.hosts.values() if h.ups and (h.name in g or
                                                                     h.role == GATEWAY_ROLE)})
    return [*fab.sparks, *fab.switches, *groups, *[k for _, _, k in g.edges(keys=True)], *ups]


def spofs(fab: Fabric, intent: Intent, tp: int) -> list[WhatIf]:
    """Every single element whose loss stops TP{tp} (no group left) or all serving."""
    out = []
    for target in candidates(fab, intent):
        result = fail_target(fab, intent, target, tp)
        if result.spof:
            out.append(result)
    return out


def _verdict(r: WhatIf) -> str:
    parts = ["fabric connected" if r.connected else _split(r)]
    parts.append(f"TP{r.tp}: {r.tp_groups} group(s)" if r.tp_possible else f"TP{r.tp}: none")
    parts.append(f"DP {r.dp_replicas}/{r.dp_of}")
    return "; ".join(parts)


def _split(r: WhatIf) -> str:
    alone = [c[0] for c in r.components if len(c) == 1]
    big = [c for c in r.components if len(c) > 1]
    parts = ["together: " + " | ".join(", ".join(c) for c in big)] if big else []
    if alone:
        parts.append(f"cut off: {', '.join(alone)}")
    return "fabric split (" + "; ".join(parts) + ")"


def render_md(r: WhatIf) -> str:
    """One what-if as Markdown."""
    lines = [f"# What if {r.target} fails ({r.kind}) in {r.topology}", "",
             f"- lost hosts: {', '.join(r.lost_hosts) or 'none'}",
             f"- lost cables: {', '.join(r.lost_links) or 'none'}",
             f"- Sparks left: {', '.join(r.sparks_left) or 'none'} "
             f"({len(r.sparks_left)} of {r.dp_of})",
             "- connectivity: " + ("all surviving Sparks reach each other" if r.connected
                                   else _split(r)),
             f"- TP{r.tp} group: " + (f"yes, {r.tp_groups} group(s)" if r.tp_possible
                                      else "cannot be formed"),
             f"- DP capacity left: {r.dp_replicas} of {r.dp_of} single-node servers",
             f"- bisection bandwidth: {r.bisection_gbps:g} Gb/s "
             f"(was {r.bisection_before_gbps:g})",
             f"- single point of failure: {'YES' if r.spof else 'no'}"]
    lines += [f"- note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


def spof_md(name: str, found: list[WhatIf], tp: int) -> str:
    """The single points of failure as a Markdown table."""
    lines = [f"# Single points of failure in {name} (TP{tp})", "",
             "| element | kind | lost | effect |", "|---|---|---|---|"]
    for r in found:
        lost = ", ".join([*r.lost_hosts, *r.lost_links]) or "-"
        lines.append(f"| {r.target} | {r.kind} | {lost} | {_verdict(r)} |")
    if not found:
        lines.append("| none | | | |")
    return "\n".join(lines) + "\n"
