"""Build the Intent from a topology file and an inventory, running every static check.

All problems are collected before failing, so one run of `fabric topo check` lists them all.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from fabric.errors import InputError, InputProblem
from fabric.intent import addressing
from fabric.intent.inventory import Inventory, load_inventory
from fabric.intent.locate import default_inventory, resolve_topology
from fabric.intent.model import (
    Endpoint,
    Host,
    Intent,
    LanePlan,
    Link,
    Rail,
    RailEnd,
    SwitchPlan,
)
from fabric.intent.platforms import SwitchModel, spark_port_gbps, switch_model, switch_models
from fabric.intent.profiles import get_profile, profile_names
from fabric.intent.schema import ENDPOINT_RE, LinkSpec, TopologySpec
from fabric.intent.yamlsource import SourceDoc, dotted, load_yaml, validate


@dataclass
class _Ctx:
    doc: SourceDoc
    spec: TopologySpec
    inv: Inventory
    problems: list[InputProblem] = field(default_factory=list)

    def err(self, path: tuple[str | int, ...], message: str) -> None:
        self.problems.append(self.doc.problem(path, message))


def load_intent(topology: str | Path, inventory: Path | None = None) -> Intent:
    """Load and statically check a topology against an inventory; InputError lists problems."""
    topo_path = resolve_topology(topology)
    inv = load_inventory(inventory or default_inventory())
    doc = load_yaml(topo_path)
    if not isinstance(doc.data, dict):
        raise InputError(doc.problem((), "a topology file is a mapping (name, profile, links…)"))
    spec = validate(doc, TopologySpec)
    ctx = _Ctx(doc, spec, inv)
    intent = _build(ctx)
    if ctx.problems or intent is None:
        raise InputError(ctx.problems)
    return intent


def _build(ctx: _Ctx) -> Intent | None:
    spec = ctx.spec
    if spec.profile not in profile_names():
        ctx.err(("profile",), f"unknown link profile {spec.profile!r}; known: "
                f"{', '.join(profile_names())}")
    model = _check_switch(ctx)
    _check_qos(ctx)
    _check_hosts(ctx)
    _check_pools(ctx)
    _check_cabling(ctx, model)
    if ctx.problems:
        return None
    links = _resolve_links(ctx, model)
    if ctx.problems:
        return None
    switch = _switch_plan(ctx, model, links) if model else None
    kind = "star" if model else ("ring" if _is_ring(links) else "mesh")
    return Intent(name=spec.name, description=spec.description, topology_file=ctx.doc.file,
                  mtu=spec.mtu, profile=get_profile(spec.profile), kind=kind,
                  hosts=dict(ctx.inv.hosts), links=tuple(links), switch=switch, qos=spec.qos)


def _is_ring(links: list[Link]) -> bool:
    """Three or more hosts, each with two cables, all connected (networkx: a switchless
    topology is the only one that needs a graph to be built here)."""
    import networkx as nx

    graph = nx.MultiGraph([(link.a.host, link.b.host) for link in links])
    return (graph.number_of_nodes() >= 3 and all(d == 2 for _, d in graph.degree())
            and nx.is_connected(graph))


def _check_switch(ctx: _Ctx) -> SwitchModel | None:
    sw = ctx.spec.switch
    if sw is None:
        return None
    host = ctx.inv.hosts.get(sw.host)
    if host is None:
        ctx.err(("switch", "host"), f"unknown host {sw.host!r}: not in the inventory")
        return None
    if host.role != "switch":
        ctx.err(("switch", "host"), f"{sw.host} is a {host.role}, not a switch")
        return None
    if host.model not in switch_models():
        ctx.err(("switch", "host"), f"{sw.host} has model {host.model!r}; known switch models: "
                f"{', '.join(switch_models())}")
        return None
    model = switch_model(host.model)
    for port, mode in sw.ports.items():
        if port not in model.port_names():
            ctx.err(("switch", "ports", port), f"unknown port {port!r} on {model.name}; ports "
                    f"are {model.port_names()[0]}..{model.port_names()[-1]}")
        if mode not in model.modes:
            ctx.err(("switch", "ports", port), f"unknown port mode {mode!r}; modes: "
                    f"{', '.join(model.modes)}")
    if sw.l2mtu > model.max_l2mtu:
        ctx.err(("switch", "l2mtu"), f"l2mtu {sw.l2mtu} exceeds max-l2mtu {model.max_l2mtu}")
    if sw.mtu < ctx.spec.mtu:
        ctx.err(("switch", "mtu"), f"switch mtu {sw.mtu} is below the fabric mtu "
                f"{ctx.spec.mtu}: jumbo frames would vanish silently")
    return model


def _check_qos(ctx: _Ctx) -> None:
    """`qos: lossless` configures both ends of every cable, so it needs a switch: on a DAC
    ring, PFC on the NICs alone would turn off the global pause that protects each cable."""
    if ctx.spec.qos == "lossless" and ctx.spec.switch is None:
        ctx.err(("qos",), "qos: lossless needs a switch (the lossless class is configured on "
                "the switch and the Sparks together); on a DAC ring keep qos: lossy: PFC on "
                "the NICs alone turns off the global pause that protects each cable")


def _check_hosts(ctx: _Ctx) -> None:
    ids: dict[int, str] = {}
    used = {h for link in ctx.spec.links for h in _hosts_of(link)}
    for name, host in sorted(ctx.inv.hosts.items()):
        if host.role != "spark" or name not in used:
            continue
        where = ctx.inv.where[name]
        if not host.ports:
            ctx.problems.append(InputProblem(where.file, where.line, f"{name}.data.ports",
                                             f"{name} has no port map (p0/p1 -> twin netdevs "
                                             "-> RDMA devices); is it in the sparks group?"))
        for port, twins in host.ports.items():
            if len(twins) != 2:
                ctx.problems.append(InputProblem(where.file, where.line,
                                                 f"{name}.data.ports.{port}",
                                                 f"a ConnectX-7 port has 2 twins, got "
                                                 f"{len(twins)}"))
        if host.node_id is None:
            ctx.problems.append(InputProblem(where.file, where.line, f"{name}.data.node_id",
                                             "a Spark needs a node_id (its host number)"))
        elif host.node_id in ids:
            ctx.problems.append(InputProblem(where.file, where.line, f"{name}.data.node_id",
                                             f"node_id {host.node_id} is also used by "
                                             f"{ids[host.node_id]}"))
        else:
            ids[host.node_id] = name


def _hosts_of(link: LinkSpec) -> tuple[str, str]:
    return (link.a.split(":", 1)[0], link.b.split(":", 1)[0])


def _pools(ctx: _Ctx) -> list[tuple[tuple[str | int, ...], ipaddress.IPv4Network]]:
    a = ctx.spec.addressing
    pools: list[tuple[tuple[str | int, ...], ipaddress.IPv4Network]] = []
    for i, net in enumerate(a.rails or []):
        pools.append((("addressing", "rails", i), net))
    if a.direct is not None:
        pools.append((("addressing", "direct"), a.direct))
    for i, link in enumerate(ctx.spec.links):
        for t, net in enumerate(link.subnets or []):
            pools.append((("links", i, "subnets", t), net))
    return pools


def _check_pools(ctx: _Ctx) -> None:
    a = ctx.spec.addressing
    if ctx.spec.switch is not None and len(a.rails or []) != 2:
        ctx.err(("addressing", "rails"), "a switched fabric needs exactly two rails "
                "(twin A, twin B), e.g. [10.210.0.0/24, 10.210.1.0/24]")
    for i, link in enumerate(ctx.spec.links):
        if link.subnets is None:
            continue
        if len(link.subnets) != 2:
            ctx.err(("links", i, "subnets"), "give one subnet per twin (two)")
        elif link.subnets[0] == link.subnets[1]:
            ctx.err(("links", i, "subnets"), f"twins share subnet {link.subnets[0]}: the "
                    "kernel and NCCL would pick the wrong source interface")
    pools = _pools(ctx)
    for i, (path_a, net_a) in enumerate(pools):
        for path_b, net_b in pools[i + 1:]:
            if net_a.overlaps(net_b):
                what = ("twins share a subnet" if path_a[:2] == ("addressing", "rails")
                        and path_b[:2] == ("addressing", "rails") and net_a == net_b
                        else "overlapping pools")
                ctx.err(path_b, f"{what}: {net_b} overlaps {net_a} "
                        f"({dotted(path_a)})")


def _check_cabling(ctx: _Ctx, model: SwitchModel | None) -> None:
    seen: dict[str, int] = {}
    on_switch = 0
    slowest = spark_port_gbps()  # the switch takes more links the slower they are
    for i, link in enumerate(ctx.spec.links):
        for end in ("a", "b"):
            value = getattr(link, end)
            m = ENDPOINT_RE.match(value)
            assert m is not None  # the schema already checked the shape
            host_name, port = m["host"], m["port"]
            path = ("links", i, end)
            if value in seen:
                ctx.err(path, f"port {value} is cabled twice (also links[{seen[value]}])")
                continue
            seen[value] = i
            host = ctx.inv.hosts.get(host_name)
            if host is None:
                ctx.err(path, f"unknown host {host_name!r}: not in the inventory")
                continue
            if host.role == "spark":
                _check_spark_port(ctx, path, host, port, link)
            elif host.role == "switch":
                on_switch += 1
                slowest = min(slowest, _link_gbps(link))
                _check_lane(ctx, path, host, port, link, model)
            else:
                ctx.err(path, f"{host_name} is a {host.role} host; it has no fabric ports")
        if _hosts_of(link)[0] == _hosts_of(link)[1]:
            ctx.err(("links", i), "a cable cannot loop back to the same host")
    if model is not None:
        cap = model.capacity(slowest)
        if on_switch > cap:
            sw_name = ctx.spec.switch.host if ctx.spec.switch else "the switch"
            ctx.err(("links",), f"{on_switch} Sparks on {sw_name}, "
                    f"which takes at most {cap} at {slowest}G "
                    f"({model.ports} ports x {cap // model.ports})")


def _link_gbps(link: LinkSpec) -> int:
    return int(link.speed[:-1]) if link.speed else spark_port_gbps()


def _check_spark_port(ctx: _Ctx, path: tuple[str | int, ...], host: Host, port: str,
                      link: LinkSpec) -> None:
    if host.ports and port not in host.ports:
        ctx.err(path, f"unknown port {port!r} on {host.name}; ports: {', '.join(host.ports)}")
    if _link_gbps(link) > spark_port_gbps():
        ctx.err((*path[:2], "speed"), f"{link.speed} exceeds what a Spark port carries "
                f"({spark_port_gbps()}G)")
    if ctx.spec.spark_port and port != ctx.spec.spark_port:
        ctx.err(path, f"this topology uses {ctx.spec.spark_port} on every Spark, not {port}")


def _check_lane(ctx: _Ctx, path: tuple[str | int, ...], host: Host, lane: str, link: LinkSpec,
                model: SwitchModel | None) -> None:
    sw = ctx.spec.switch
    if model is None or sw is None or host.name != sw.host:
        ctx.err(path, f"{host.name} is not this topology's switch (declare it under switch:)")
        return
    split = model.split_lane(lane)
    if split is None:
        ctx.err(path, f"unknown port {lane!r} on {host.name}: lanes are named like "
                f"{model.lane(1, 1)}")
        return
    port_no, lane_no = split
    port = model.port_name.format(port=port_no)
    mode_name = sw.ports.get(port)
    if mode_name is None:
        ctx.err(path, f"{port} has no mode under switch.ports (e.g. {port}: 2x200G)")
        return
    mode = model.modes.get(mode_name)
    if mode is None:
        return  # reported by _check_switch
    # Each group has one first lane, so a second cable on a group is caught as "cabled twice".
    if lane_no not in mode.first_lanes:
        first = mode.group_of(lane_no, model.lanes_per_port)
        ctx.err(path, f"lane collision: {lane} is absorbed into the breakout group of "
                f"{model.lane(port_no, first)} in mode {mode_name}; cable the group's "
                f"first lane ({', '.join(model.lane(port_no, n) for n in mode.first_lanes)})")
    if _link_gbps(link) > mode.gbps:
        ctx.err((*path[:2], "speed"), f"{link.speed} cannot be carried by {port} in mode "
                f"{mode_name} ({mode.gbps}G per lane group)")


def _resolve_links(ctx: _Ctx, model: SwitchModel | None) -> list[Link]:
    spec, hosts = ctx.spec, ctx.inv.hosts
    out: list[Link] = []
    parallel: Counter[frozenset[str]] = Counter()
    for i, ls in enumerate(spec.links):
        a = Endpoint(*ls.a.split(":", 1))
        b = Endpoint(*ls.b.split(":", 1))
        ha, hb = hosts[a.host], hosts[b.host]
        lane = b.port if hb.role == "switch" else (a.port if ha.role == "switch" else None)
        rails = []
        pair = frozenset((a.host, b.host))
        k = parallel[pair]
        parallel[pair] += 1
        for twin in (0, 1):
            subnet = _subnet(ctx, i, ls, ha, hb, k, twin)
            if subnet is None:
                break
            rails.append(Rail(twin, subnet, _rail_end(ctx, i, "a", ha, a, twin, subnet),
                              _rail_end(ctx, i, "b", hb, b, twin, subnet)))
        out.append(Link(id=f"{a}--{b}", a=a, b=b, speed_gbps=_link_gbps(ls), cable=ls.cable,
                        rails=tuple(rails), switch_lane=lane,
                        line=ctx.doc.line_of(("links", i))))
    _check_unique_addresses(ctx, out)
    return out


def _subnet(ctx: _Ctx, i: int, ls: LinkSpec, ha: Host, hb: Host, parallel: int,
            twin: int) -> ipaddress.IPv4Network | None:
    a = ctx.spec.addressing
    if ls.subnets:
        return ls.subnets[twin]
    if "switch" in (ha.role, hb.role):
        assert a.rails is not None
        return a.rails[twin]
    if a.direct is None:
        ctx.err(("addressing", "direct"), "direct cables need a `direct` pool")
        return None
    if parallel > 1:
        ctx.err(("links", i), "at most two cables can join the same two Sparks")
        return None
    net = addressing.direct_subnet(a.direct, a.direct_prefix, ha.node_id or 0, hb.node_id or 0,
                                   parallel, twin)
    if net is None:
        ctx.err(("addressing", "direct"), f"pool {a.direct} is too small for /"
                f"{a.direct_prefix} subnets for {ha.name}--{hb.name}")
    return net


def _rail_end(ctx: _Ctx, i: int, side: str, host: Host, ep: Endpoint, twin: int,
              subnet: ipaddress.IPv4Network) -> RailEnd:
    if host.role == "switch":
        return RailEnd(host.name, ep.port, None, None)
    t = host.ports[ep.port][twin]
    addr = addressing.host_address(subnet, host.node_id or 0)
    if addr is None:
        ctx.err(("links", i, side), f"node_id {host.node_id} of {host.name} does not fit in "
                f"{subnet}")
    return RailEnd(host.name, t.netdev, t.rdma, addr)


def _check_unique_addresses(ctx: _Ctx, links: list[Link]) -> None:
    owners: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for link in links:
        for rail in link.rails:
            for end in (rail.a, rail.b):
                if end.address is not None:
                    owners[str(end.address.ip)].add((end.host, end.netdev))
    by_host_subnet: dict[tuple[str, str], set[str]] = defaultdict(set)
    for link in links:
        for rail in link.rails:
            for end in (rail.a, rail.b):
                if end.address is not None:
                    by_host_subnet[(end.host, str(rail.subnet))].add(end.netdev)
    for (host, subnet), netdevs in sorted(by_host_subnet.items()):
        if len(netdevs) > 1:
            ctx.err(("addressing",), f"twins share a subnet: {host} has "
                    f"{', '.join(sorted(netdevs))} in {subnet}")
    for ip, who in sorted(owners.items()):
        if len(who) > 1:
            ctx.err(("addressing",), f"address {ip} planned twice: "
                    f"{', '.join(f'{h}:{n}' for h, n in sorted(who))}")


def _switch_plan(ctx: _Ctx, model: SwitchModel, links: list[Link]) -> SwitchPlan:
    sw = ctx.spec.switch
    assert sw is not None
    by_lane = {link.switch_lane: link for link in links if link.switch_lane}
    lanes: list[LanePlan] = []
    for port, mode_name in sorted(sw.ports.items()):
        mode = model.modes[mode_name]
        port_no = model.port_names().index(port) + 1
        for first in mode.first_lanes:
            name = model.lane(port_no, first)
            link = by_lane.get(name)
            peer = link.peer_of(sw.host).host if link else None
            lanes.append(LanePlan(name=name, port=port, mode=mode_name, speed=mode.speed,
                                  auto_negotiation=mode.auto_negotiation,
                                  fec_mode=model.fec_mode, gbps=mode.gbps, cabled_to=peer,
                                  link_id=link.id if link else None))
    return SwitchPlan(host=sw.host, model=model.name, bridge=sw.bridge, mtu=sw.mtu,
                      l2mtu=sw.l2mtu, max_l2mtu=model.max_l2mtu, lanes=tuple(lanes),
                      port_modes=dict(sw.ports))
