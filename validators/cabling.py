"""cabling: LLDP on both ends of every cable agrees with the topology; a miscabled end is named
with the exact move (or swap) that fixes it.

Only fresh LLDP entries are judged. An entry the collector marked stale (older than the
port's last link change, or superseded by a younger neighbour on the same port, see
`fabric.neighbors`) says nothing about the cable plugged in now: it is never reported as
"cabled to X"; an end that has nothing but stale entries gives a `stale` warning with the
entries' ages, unless the other end settles the cable."""

from __future__ import annotations

from collections import defaultdict

from fabric.facts import Facts, NeighborFact
from fabric.intent.model import Endpoint, Intent, Link
from validators.judge import Out, fabric_netdevs
from validators.registry import check


def _host_named(intent: Intent, system_name: str) -> str | None:
    """Inventory host for an LLDP system name (`spark01`, `spark01.mgmt.lan`, `crs804`)."""
    for name, h in intent.hosts.items():
        if system_name in (name, h.hostname) or system_name.split(".")[0] == name:
            return name
    return None


def _port_named(intent: Intent, host: str, port_id: str) -> str:
    """Topology port name for an interface name seen on `host` (twin netdev -> `p0`)."""
    h = intent.hosts.get(host)
    if h is None or h.role != "spark":
        return port_id
    return fabric_netdevs(intent, host).get(port_id, (port_id, 0))[0]


def _is_spark(intent: Intent, host: str) -> bool:
    h = intent.hosts.get(host)
    return h is not None and h.role == "spark"


Stale = dict[Endpoint, list[tuple[Endpoint, float | None]]]


def _observed(intent: Intent, facts: Facts
              ) -> tuple[dict[Endpoint, set[Endpoint]], set[str], Stale]:
    """Each local endpoint -> the remote endpoints fresh LLDP entries saw there; the hosts
    that spoke LLDP at all (an absent neighbor only counts on those); and each local
    endpoint's stale entries (remote endpoint, age)."""
    seen: dict[Endpoint, set[Endpoint]] = defaultdict(set)
    stale: Stale = defaultdict(list)
    speaking: set[str] = set()
    sources: list[tuple[str, tuple[NeighborFact, ...]]] = [
        (h, sf.neighbors) for h, sf in facts.sparks.items()]
    if facts.switch is not None:
        sources.append((facts.switch.host, facts.switch.neighbors))
    for host, neighbors in sources:
        if host not in intent.hosts:
            continue
        if neighbors:
            speaking.add(host)
        for n in neighbors:
            remote = _host_named(intent, n.system_name) or n.system_name  # foreign: as named
            local = Endpoint(host, _port_named(intent, host, n.local_port))
            far = Endpoint(remote, _port_named(intent, remote, n.port_id))
            if n.stale:
                stale[local].append((far, n.age_s))
            else:
                seen[local].add(far)
    return seen, speaking, stale


def _ages(entries: list[tuple[Endpoint, float | None]]) -> str:
    best: dict[Endpoint, float | None] = {}
    for far, age in entries:
        old = best.get(far)
        best[far] = age if old is None else (old if age is None else min(old, age))
    return ", ".join(f"{far} ({'age unknown' if age is None else f'{age:.0f} s old'})"
                     for far, age in sorted(best.items(), key=lambda x: str(x[0])))


def _fix(intent: Intent, here: Endpoint, want: Endpoint, there: Endpoint,
         seen: dict[Endpoint, set[Endpoint]]) -> str:
    """The cable from `here` lands on `there` but belongs on `want`. If the cable now at
    `want` belongs on `there`, exchanging the two plugs fixes both cables."""
    planned = {e: link.peer_of(e.host) for link in intent.links for e in link.ends()}
    occupied = sorted((e for e in seen.get(want, set()) if e != here), key=str)
    if occupied and any(planned.get(z) == there for z in occupied):
        return f"swap the cables at {there} and {want}"
    if occupied:
        return f"move the cable at {there} to {want} (and the cable now at {want} to its intended)"
    return f"move the cable at {there} to {want}"


def _rank(intent: Intent, want: Endpoint, there: Endpoint, fix: str) -> tuple[bool, ...]:
    """Fixes made on the switch first (easiest to reach), then swaps, then one-host fixes."""
    on_switch = intent.switch is not None and want.host == intent.switch.host
    return (not on_switch, not fix.startswith("swap"), want.host != there.host)


def _judge_link(intent: Intent, link: Link, seen: dict[Endpoint, set[Endpoint]],
                speaking: set[str], stale: Stale, out: Out) -> None:
    ends = ((link.a, link.b), (link.b, link.a))
    wrong = [(here, want, there) for here, want in ends for there in sorted(
        seen.get(here, set()), key=str) if there != want]
    if wrong:
        fixes = sorted(((_fix(intent, h, w, t, seen), h, w, t) for h, w, t in wrong),
                       key=lambda f: _rank(intent, f[2], f[3], f[0]))
        fix, here, want, there = fixes[0]
        same_port = [f"{h.port}<->{t.port}" for h, _, t in wrong
                     if h.port == t.port and _is_spark(intent, t.host)
                     and _is_spark(intent, h.host)]
        note = (f" ({same_port[0]}: RDMA fails with ibv_modify_qp error 110)"
                if same_port else "")
        out.fail(f"{link.id}: {here} is cabled to {there}, not {want}{note}; "
                 f"fix at {want.host}", host=want.host, link=link.id, expected=str(want),
                 actual=str(there), hint=fix)
        return
    confirmed = [here for here, want in ends if want in seen.get(here, set())]
    if confirmed:
        out.ok(f"{link.id}: LLDP confirms it from {' and '.join(str(e) for e in confirmed)}",
               link=link.id, expected=link.id, actual=link.id)
        return
    old = [(here, stale[here]) for here, _ in ends if stale.get(here)]
    if old:
        where = "; ".join(f"at {here}: {_ages(entries)}" for here, entries in old)
        out.warn(f"{link.id}: stale: LLDP cannot tell what is plugged in now, not judged: "
                 f"{where} (entries older than the link's last change, or several "
                 "neighbours on one port: LLDP keeps one it no longer hears until its TTL)",
                 link=link.id,
                 expected=link.id, actual="stale",
                 hint="the neighbour has not been heard since the link last changed; "
                 "`lldpcli update` on the Sparks (validate does it) and validate again, or "
                 "check that the far end runs LLDP")
        return
    silent = [here.host for here, _ in ends if here.host in speaking]
    if silent:
        out.warn(f"{link.id}: no LLDP neighbor at {' or '.join(str(h) for h, _ in ends)} "
                 f"although {', '.join(silent)} speaks LLDP", link=link.id,
                 expected=link.id, actual=None,
                 hint=f"is the cable {link.id} plugged in? (see link.twin_up)")
    else:
        out.skip(f"{link.id}: neither end reports LLDP neighbors (lldpd on the Sparks, "
                 "/ip/neighbor discovery on the switch)", link=link.id)


@check("cabling.lldp")
def check_lldp(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges each cable against fresh LLDP seen on both ends (stale entries warn, never
    judge); names the move that fixes a miscabling."""
    for host in [h.name for h in intent.sparks]:
        out.spark(host)
    if intent.switch is not None:
        out.switch(intent.switch.host)
    seen, speaking, stale = _observed(intent, facts)
    for link in intent.links:
        _judge_link(intent, link, seen, speaking, stale, out)
