"""`swap A,B`: two cables re-paired, as a person plugs two DACs into each other's ports.

On a switch the two lanes exchange names (the cables move, each name keeps its MTU and
bridge); between Sparks the cables are laid again as new veths, each Spark's twins keeping
their settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabric.lab import names, ns
from fabric.lab.faults.kernel import ipv4, is_up, link_info
from fabric.lab.faults.records import (
    Cable,
    Fault,
    SwapRenameUndo,
    SwapRepairUndo,
    SwapUndo,
)
from fabric.lab.faults.targets import Ctx, cable_end, swap_links
from fabric.lab.lifecycle import cabling

#: Per-twin sysctls that survive a re-laid cable (push sets them against ARP flux).
TWIN_SYSCTLS = ("net.ipv4.conf.{dev}.arp_ignore", "net.ipv4.conf.{dev}.arp_announce")


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


@dataclass(frozen=True)
class Twin:
    """A twin netdev's settings as a re-laid cable must keep them."""

    name: str
    mac: str
    mtu: int
    up: bool
    addrs: tuple[str, ...]
    sysctls: dict[str, str]


def repair(ctx: Ctx, cables: list[Cable]) -> None:
    """Re-lay Spark-to-Spark cables: each (host, port, host, port) becomes one new veth.

    The twins are re-created on the new (silent) cable end with their MAC, MTU, state,
    addresses and ARP sysctls, as a re-plugged cable leaves a Spark's settings alone.
    """
    ports = {(h, p) for q in cables for h, p in ((q[0], q[1]), (q[2], q[3]))}
    saved = {hp: save_twins(ctx, *hp) for hp in ports}
    for host, port in ports:
        ns.run(["ip", "-n", ctx.netns(host), "link", "del", "dev", names.lower(port)],
               check=False)
    root = [cabling.veth_line(ctx.info.name, ctx.intent, cable_end(ctx, ha, pa),
                              cable_end(ctx, hb, pb))
            for ha, pa, hb, pb in cables]
    ns.ip_batch(root)
    for (host, port), twins in saved.items():
        lower, netns = names.lower(port), ctx.netns(host)
        ns.ip_batch([f"link add link {lower} name {t.name} address {t.mac} mtu {t.mtu}"
                     " type macvlan mode private" for t in twins], netns)
        ns.sysctl(netns, {**cabling.hidden_end_sysctls([lower]),
                          **{k: v for t in twins for k, v in t.sysctls.items()}})
        ns.ip_batch(twin_up_lines(lower, twins), netns)
    for host in sorted({h for h, _ in saved}):
        # A re-plugged netdev stays in the field, so lldpd already runs on it; the lab's is
        # new, so let lldpd take it in now (a rescan; what it sends carries no beacon of a
        # later run, so it makes no evidence fresher than the field's).
        ns.run(ns.in_host(ctx.holder(host), ["lldpcli", "update"]), check=False)


def twin_up_lines(lower: str, twins: list[Twin]) -> list[str]:
    """The cable end up, then each twin's addresses and state again."""
    lines = [f"link set {lower} up"]
    for t in twins:
        lines += [f"addr add {a} dev {t.name}" for a in t.addrs]
        if t.up:
            lines.append(f"link set {t.name} up")
    return lines


def save_twins(ctx: Ctx, host: str, port: str) -> list[Twin]:
    netns = ctx.netns(host)
    twins = [t.netdev for t in ctx.intent.hosts[host].ports[port]]
    values = ns.read_sysctls(netns, [k.format(dev=t) for t in twins for k in TWIN_SYSCTLS])
    out = []
    for twin in twins:
        info = link_info(netns, twin)
        keys = [k.format(dev=twin) for k in TWIN_SYSCTLS]
        out.append(Twin(name=twin, mac=info["address"], mtu=info["mtu"], up=is_up(info),
                        addrs=tuple(ipv4(netns, twin)),
                        sysctls={k: values[k] for k in keys if k in values}))
    return out
