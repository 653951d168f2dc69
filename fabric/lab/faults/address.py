"""Faults of a host's addressing: `wrong-addr` and `default-route` (both on HOST:NETDEV)."""

from __future__ import annotations

import ipaddress
import json

from fabric.lab import ns
from fabric.lab.faults.kernel import ipv4
from fabric.lab.faults.records import DefaultRouteUndo, Fault, Route, WrongAddrUndo
from fabric.lab.faults.targets import Ctx, host_netdev

WRONG_HOST = 200


def wrong_address(addr: ipaddress.IPv4Interface) -> ipaddress.IPv4Interface:
    """Host WRONG_HOST of `addr`'s subnet (201 when `addr` is that host)."""
    net = addr.network
    wrong_host = WRONG_HOST if int(addr.ip) - int(net.network_address) != WRONG_HOST else 201
    return ipaddress.IPv4Interface((int(net.network_address) + wrong_host, net.prefixlen))


def dead_gateway(addr: ipaddress.IPv4Interface) -> ipaddress.IPv4Address:
    """A gateway in `addr`'s subnet that no host answers for: the last host address (the one
    before it when that is `addr`)."""
    gw = ipaddress.IPv4Address(int(addr.network.broadcast_address) - 1)
    if gw == addr.ip:
        gw = gw - 1
    return gw


def configured(ctx: Ctx, target: str) -> tuple[str, str, ipaddress.IPv4Interface]:
    host, netdev = host_netdev(ctx, target)
    addrs = ipv4(ctx.netns(host), netdev)
    if not addrs:
        raise ns.LabError(f"{host}:{netdev} has no IPv4 address: configure the lab first "
                          f"(fabric push --lab {ctx.info.name} --apply)")
    return host, netdev, ipaddress.IPv4Interface(addrs[0])


def wrong_addr(ctx: Ctx, target: str) -> Fault:
    host, netdev, addr = configured(ctx, target)
    wrong = wrong_address(addr)
    ns.ip_batch([f"addr del {addr} dev {netdev}", f"addr add {wrong} dev {netdev}"],
                ctx.netns(host))
    return Fault("wrong-addr", target, f"{host}:{netdev} {addr} -> {wrong}",
                 WrongAddrUndo(host=host, dev=netdev, good=str(addr), wrong=str(wrong)))


def undo_wrong_addr(ctx: Ctx, u: WrongAddrUndo) -> None:
    ns.ip_batch([f"addr del {u.wrong} dev {u.dev}", f"addr add {u.good} dev {u.dev}"],
                ctx.netns(u.host))


def default_route(ctx: Ctx, target: str) -> Fault:
    host, netdev, addr = configured(ctx, target)
    netns = ctx.netns(host)
    old = json.loads(ns.run(["ip", "-n", netns, "-j", "-4", "route", "show", "default"]) or "[]")
    gw = dead_gateway(addr)
    ns.run(["ip", "-n", netns, "route", "replace", "default", "via", str(gw), "dev", netdev])
    previous = tuple(Route(gateway=r.get("gateway"), dev=r.get("dev")) for r in old)
    return Fault("default-route", target, f"{host}: default via {gw} dev {netdev}",
                 DefaultRouteUndo(host=host, previous=previous))


def route_add_argv(netns: str, route: Route) -> list[str]:
    """`ip route add` of a default route as it was (a route with no netdev: without `dev`)."""
    via = ["via", route.gateway] if route.gateway else []
    dev = ["dev", route.dev] if route.dev is not None else []
    return ["ip", "-n", netns, "route", "add", "default", *via, *dev]


def undo_default_route(ctx: Ctx, u: DefaultRouteUndo) -> None:
    netns = ctx.netns(u.host)
    ns.run(["ip", "-n", netns, "route", "del", "default"], check=False)
    for r in u.previous:
        ns.run(route_add_argv(netns, r))
