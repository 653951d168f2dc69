"""addr and route: planned addresses only, unique, twins in different subnets; no fabric
default route and no route to the management network over a fabric netdev."""

from __future__ import annotations

import ipaddress
from collections import defaultdict

from fabric.facts import Facts, RouteFact
from fabric.intent.model import Intent
from validators.judge import Findings, fabric_netdevs, ipv4, link_of_netdev, spark_hosts
from validators.registry import check, needs

#: What addr judges: each Spark's addresses (ip addr).
NEEDS_ADDR = needs("addr", spark=True)
#: What route judges: each Spark's routes (ip route).
NEEDS_ROUTE = needs("route", spark=True)


@check("addr.plan")
def check_plan(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each fabric netdev: exactly its planned address, nothing unplanned."""
    for host, sf in out.sparks(intent):
        planned = {p.netdev: p for p in intent.interfaces(host)}
        for netdev in fabric_netdevs(intent, host):
            intended = planned.get(netdev)
            nd = sf.netdevs.get(netdev)
            have = sorted(nd.addresses) if nd else []
            want = [str(intended.address)] if intended else []
            link = intended.link_id if intended else None
            if not want and not have:
                continue
            if have == want:
                out.ok(f"{host} {netdev} has {want[0]}", host=host, link=link, expected=want,
                       actual=have)
                continue
            missing = [a for a in want if a not in have]
            extra = [a for a in have if a not in want]
            bits = []
            if missing:
                bits.append(f"missing {', '.join(missing)}")
            if extra:
                bits.append(f"unplanned {', '.join(extra)}")
            fix = [f"ip addr add {a} dev {netdev}" for a in missing]
            fix += [f"ip addr del {a} dev {netdev}" for a in extra]
            out.fail(f"{host} {netdev}" + (f" ({link})" if link else " (not cabled)")
                     + ": " + "; ".join(bits), host=host, link=link, expected=want,
                     actual=have, hint="; ".join(fix) + " (then fix netplan: `fabric push`)")


@check("addr.unique")
def check_unique(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that no fabric address is configured on more than one host."""
    owners: dict[str, list[tuple[str, str]]] = defaultdict(list)
    planned = {str(p.address.ip): p.host for p in intent.interfaces()}
    for host in spark_hosts(intent):
        sf = facts.sparks.get(host)
        if sf is None:
            continue  # reported by addr.plan
        for netdev in fabric_netdevs(intent, host):
            nd = sf.netdevs.get(netdev)
            for addr in nd.addresses if nd else ():
                iface = ipv4(addr)
                if iface is not None:
                    owners[str(iface.ip)].append((host, netdev))
    dups = {ip: who for ip, who in owners.items() if len({h for h, _ in who}) > 1}
    for ip, who in sorted(dups.items()):
        owner = planned.get(ip)
        wrong = [(h, n) for h, n in who if h != owner] or who
        for host, netdev in wrong:
            others = ", ".join(f"{h} {n}" for h, n in who if h != host)
            out.fail(f"{ip} is on {host} {netdev} and also on {others}", host=host,
                     link=link_of_netdev(intent, host, netdev),
                     expected=f"{ip} only on {owner}" if owner else f"{ip} on one host",
                     actual=[f"{h}:{n}" for h, n in who],
                     hint=f"ip addr del {ip} dev {netdev} on {host}; give it its planned "
                     "address (see addr.plan)")
    if not dups:
        out.ok(f"{len(owners)} fabric addresses, each on one host", expected="unique",
               actual=len(owners))


@check("addr.twin_subnets")
def check_twin_subnets(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that the two twins of a port are addressed in different subnets."""
    for host, sf in out.sparks(intent):
        for port, twins in intent.hosts[host].ports.items():
            nets: dict[str, set[ipaddress.IPv4Network]] = {}
            for t in twins:
                nd = sf.netdevs.get(t.netdev)
                nets[t.netdev] = {i.network for a in (nd.addresses if nd else ())
                                  if (i := ipv4(a)) is not None}
            if any(not v for v in nets.values()):
                continue  # an unaddressed twin is judged by addr.plan
            link = link_of_netdev(intent, host, twins[0].netdev)
            shared = set.intersection(*nets.values())
            actual = {n: sorted(str(x) for x in v) for n, v in nets.items()}
            if shared:
                out.fail(f"{host} {port}: twins {', '.join(nets)} share subnet "
                         f"{', '.join(str(s) for s in sorted(shared))}: the kernel and NCCL "
                         "pick the wrong source interface", host=host, link=link,
                         expected="different subnets", actual=actual,
                         hint="put twin A in rail 0 and twin B in rail 1 (see addr.plan)")
            else:
                out.ok(f"{host} {port}: twins in different subnets", host=host, link=link,
                       expected="different subnets", actual=actual)


def _fabric_routes(intent: Intent, routes: tuple[RouteFact, ...],
                   host: str) -> list[RouteFact]:
    devs = fabric_netdevs(intent, host)
    return [r for r in routes if r.dev in devs]


def _is_default(route: RouteFact) -> bool:
    return route.dst in ("default", "0.0.0.0/0")


@check("route.no_default")
def check_no_default(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that no default route leaves through a fabric netdev."""
    for host, sf in out.sparks(intent):
        bad = [r for r in _fabric_routes(intent, sf.routes, host) if _is_default(r)]
        if not bad:
            out.ok(f"{host}: no default route on a fabric netdev", host=host, expected=[],
                   actual=[])
        for r in bad:
            via = f" via {r.gateway}" if r.gateway else ""
            out.fail(f"{host}: default route{via} dev {r.dev}: control traffic and downloads "
                     "would leave through the fabric", host=host,
                     link=link_of_netdev(intent, host, r.dev), expected=[],
                     actual=f"default{via} dev {r.dev}",
                     hint=f"ip route del default{via} dev {r.dev}; remove gateway4/routes "
                     "from the fabric netdev in netplan")


@check("route.no_mgmt")
def check_no_mgmt(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that the management network is not routed over a fabric netdev."""
    for host, sf in out.sparks(intent):
        mgmt_if = intent.hosts[host].mgmt_interface
        mgmt = [n for r in sf.routes if r.dev == mgmt_if and not _is_default(r)
                and (n := _net(r.dst)) is not None]
        if not mgmt:
            out.skip(f"{host}: no route on {mgmt_if} tells the management network",
                     host=host)
            continue
        bad = [r for r in _fabric_routes(intent, sf.routes, host)
               if (n := _net(r.dst)) is not None and any(n.overlaps(m) for m in mgmt)]
        expected = f"{', '.join(str(m) for m in mgmt)} only via {mgmt_if}"
        if not bad:
            out.ok(f"{host}: management network only via {mgmt_if}", host=host,
                   expected=expected, actual=[])
        for r in bad:
            out.fail(f"{host}: route to {r.dst} (management) via fabric netdev {r.dev}",
                     host=host, link=link_of_netdev(intent, host, r.dev), expected=expected,
                     actual=f"{r.dst} dev {r.dev}",
                     hint=f"ip route del {r.dst} dev {r.dev}; fabric netdevs carry only "
                     "their rail subnets")


def _net(dst: str) -> ipaddress.IPv4Network | None:
    if dst in ("default", "0.0.0.0/0"):
        return None
    try:
        return ipaddress.IPv4Network(dst, strict=False)
    except ValueError:
        return None
