"""`swap A,B`: two cables re-paired, as a person plugs two DACs into each other's ports.

On a switch the two lanes exchange names (the cables move, each name keeps its MTU and
bridge); between Sparks the cables move at the lab's patch panel (`lifecycle.panel`).
"""

from __future__ import annotations

from typing import Any

from fabric.intent.model import Endpoint
from fabric.lab import names, ns
from fabric.lab.faults.kernel import is_up, link_info
from fabric.lab.faults.records import (
    Cable,
    Fault,
    SwapRenameUndo,
    SwapRepairUndo,
    SwapUndo,
)
from fabric.lab.faults.targets import Ctx, swap_links
from fabric.lab.lifecycle import panel


def swap(ctx: Ctx, target: str) -> Fault:
    (la, ha), (lb, hb) = swap_links(ctx, target)
    undo: SwapUndo
    if ctx.info.switch:
        sw = ctx.info.switch
        lanes = (la.end_of(sw).port, lb.end_of(sw).port)
        swap_names(ctx.netns(sw), *lanes)
        hosts = {sw, la.peer_of(sw).host, lb.peer_of(sw).host}
        undo = SwapRenameUndo(hosts=tuple(sorted(hosts)), switch=sw, lanes=lanes)
    else:
        a, b = la.end_of(ha), lb.end_of(hb)
        pa, pb = la.peer_of(ha), lb.peer_of(hb)
        repair(ctx, [(a.host, a.port, pb.host, pb.port), (b.host, b.port, pa.host, pa.port)])
        hosts = {a.host, b.host, pa.host, pb.host}
        undo = SwapRepairUndo(hosts=tuple(sorted(hosts)),
                              cables=((a.host, a.port, pa.host, pa.port),
                                      (b.host, b.port, pb.host, pb.port)))
    return Fault("swap", target, f"cables {la.id} and {lb.id} re-paired", undo)


def undo_swap(ctx: Ctx, u: SwapUndo) -> None:
    if isinstance(u, SwapRenameUndo):
        swap_names(ctx.netns(u.switch), *u.lanes)
    elif isinstance(u, SwapRepairUndo):
        repair(ctx, list(u.cables))
    else:
        raise ns.LabError(f"swap: cannot undo a {type(u).__name__}")


def swap_lines(a: str, b: str, infos: dict[str, dict[str, Any]]) -> list[str]:
    """The `ip -batch` lines exchanging netdevs `a` and `b`, each name keeping the MTU,
    bridge and state that `ip -j link` (`infos` by name) gave before."""
    tmp = "fl-swap-tmp"
    lines = [f"link set {a} down", f"link set {b} down", f"link set {a} name {tmp}",
             f"link set {b} name {a}", f"link set {tmp} name {b}"]
    for name in (a, b):
        info = infos[name]
        lines.append(f"link set {name} mtu {info['mtu']}")
        master = info.get("master")
        lines.append(f"link set {name} master {master}" if master else f"link set {name} nomaster")
        if is_up(info):
            lines.append(f"link set {name} up")
    return lines


def swap_names(netns: str, a: str, b: str) -> None:
    """Exchange two netdevs' names (the cables move, each name keeps its MTU and bridge): both
    lanes down, the cables moved, both up, as a person re-plugs two DACs. Nothing restarts and
    no LLDP table is touched: both ends keep the neighbour learned before the move until its
    TTL, as in the field."""
    ns.ip_batch(swap_lines(a, b, {a: link_info(netns, a), b: link_info(netns, b)}), netns)


def repair(ctx: Ctx, cables: list[Cable]) -> None:
    """Re-plug Spark-to-Spark cables at the lab's patch panel: each (host, port, host, port)
    becomes one cable. Every end involved goes dark, moves and lights again; no netdev of a
    Spark is re-created and nothing restarts, so lldpd keeps the neighbour it learned before
    the move until its TTL, as in the field."""
    pairs = [(Endpoint(ha, pa), Endpoint(hb, pb)) for ha, pa, hb, pb in cables]
    ns.ip_batch(panel.replug_lines(ctx.intent, pairs), names.panel_netns(ctx.info.name))
