"""cabling: LLDP on both ends of every cable agrees with the topology; a miscabled end is named
with the exact move (or swap) that fixes it.

Only fresh LLDP entries decide (`fabric.neighbors`: heard after the port's last link change,
or carrying this run's beacon). A stale entry says nothing about the cable plugged in now: it
is never reported as "cabled to X", and it never confirms a cable either. A cable with no
fresh evidence at either end is an `error` (`fabric gate` refuses it) naming what the ends
still list and how old it is; only where neither end speaks LLDP at all is it a `skip`."""

from __future__ import annotations

from collections import defaultdict

from fabric.facts import Facts, NeighborFact
from fabric.intent.model import Endpoint, Intent, Link
from validators.judge import Findings, fabric_netdevs
from validators.registry import check, needs


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


def _swapped_with(intent: Intent, here: Endpoint, want: Endpoint, there: Endpoint,
                  seen: dict[Endpoint, set[Endpoint]]) -> Endpoint | None:
    """The other place of an exchange: the cable from `here` lands on `there` but belongs on
    `want`; if the place `there` belongs to hears `want` (or `want` hears the place planned
    for `there`), the two cables are each other's, and that place is returned."""
    planned = {e: link.peer_of(e.host) for link in intent.links for e in link.ends()}
    mate = planned.get(there)
    if mate is not None and mate != here and want in seen.get(mate, set()):
        return mate
    for z in seen.get(want, set()):
        if z != here and planned.get(z) == there:
            return z
    return None


def _fix(intent: Intent, here: Endpoint, want: Endpoint, there: Endpoint,
         seen: dict[Endpoint, set[Endpoint]]) -> tuple[str, str]:
    """(what is wrong, what fixes it) for the cable from `here` that lands on `there` but
    belongs on `want`."""
    found = f"{here} is cabled to {there}, not {want}"
    mate = _swapped_with(intent, here, want, there, seen)
    if mate is not None:
        # which two plugs to name: either pair of ends is a true account of the exchange;
        # the switch's lanes (easiest to reach), else the same pair from both cables
        pairs = [((here, mate), (want.host, there.host)), ((want, there), (here.host, mate.host))]
        on_switch = [p for p in pairs if intent.switch is not None
                     and {e.host for e in p[0]} == {intent.switch.host}]
        plug_pair, host_pair = (on_switch or sorted(pairs, key=lambda p: sorted(map(str, p[0]))))[0]
        plugs = sorted(plug_pair, key=str)
        hosts = sorted(host_pair)
        at = (f"{plugs[0].host} {plugs[0].port} / {plugs[1].port}"
              if plugs[0].host == plugs[1].host else f"{plugs[0]} / {plugs[1]}")
        who = f"{hosts[0]} and {hosts[1]}" if hosts[0] != hosts[1] else f"{hosts[0]}'s cables"
        return (f"{who} are swapped at {at} ({found})",
                "swap the cables back, or change the topology")
    occupied = sorted((e for e in seen.get(want, set()) if e != here), key=str)
    if occupied:
        return found, (f"move the cable at {there} to {want} (and the cable now at {want} "
                       "to its intended)")
    return found, f"move the cable at {there} to {want}"


def _rank(intent: Intent, want: Endpoint, there: Endpoint, fix: str) -> tuple[bool, ...]:
    """Fixes made on the switch first (easiest to reach), then swaps, then one-host fixes."""
    on_switch = intent.switch is not None and want.host == intent.switch.host
    return (not on_switch, not fix.startswith("swap"), want.host != there.host)


def _unverified(link: Link, ends: tuple[tuple[Endpoint, Endpoint], ...], stale: Stale,
                speaking: set[str], out: Findings) -> None:
    """A cable without fresh evidence: an error naming what its ends still list, on the
    host that could not be read where one could not (its `host.reachable` row stands)."""
    unread = [e.host for e, _ in ends if e.host in out.facts.errors]
    host = unread[0] if unread else ends[0][0].host
    old = [(here, stale[here]) for here, _ in ends if stale.get(here)]
    if old:
        where = "; ".join(f"at {here}: {_ages(entries)}" for here, entries in old)
        said = (f"only stale entries (not heard since the link last changed, or not "
                f"since this run's announcement): {where}")
    else:
        silent = [h for h, _ in ends if h.host in speaking]
        said = ("no LLDP neighbour at " + " or ".join(str(h) for h, _ in ends)
                + (f" although {', '.join(sorted({h.host for h in silent}))} speaks LLDP"
                   if silent else ""))
    out.add("error", f"{link.id}: no fresh LLDP evidence of what is plugged in now: {said}",
            host=host, link=link.id, expected=link.id, actual="unverified",
            hint=f"is the cable {link.id} plugged in and up (see link.twin_up)? Both ends "
            "must run LLDP (lldpd on the Sparks, /ip/neighbor discovery on the switch); "
            "validate again: each run announces every Spark and waits for the answers")


def _judge_link(intent: Intent, link: Link, seen: dict[Endpoint, set[Endpoint]],
                speaking: set[str], stale: Stale, out: Findings) -> None:
    ends = ((link.a, link.b), (link.b, link.a))
    wrong = [(here, want, there) for here, want in ends for there in sorted(
        seen.get(here, set()), key=str) if there != want]
    if wrong:
        fixes = sorted(((*_fix(intent, h, w, t, seen), h, w, t) for h, w, t in wrong),
                       key=lambda f: _rank(intent, f[3], f[4], f[1]))
        found, fix, _here, want, there = fixes[0]
        same_port = [f"{h.port}<->{t.port}" for h, _, t in wrong
                     if h.port == t.port and _is_spark(intent, t.host)
                     and _is_spark(intent, h.host)]
        note = (f" ({same_port[0]}: RDMA fails with ibv_modify_qp error 110)"
                if same_port else "")
        out.fail(f"{link.id}: {found}{note}; fix at {want.host}", host=want.host,
                 link=link.id, expected=str(want), actual=str(there), hint=fix)
        return
    confirmed = [here for here, want in ends if want in seen.get(here, set())]
    if confirmed:
        out.ok(f"{link.id}: LLDP confirms it from {' and '.join(str(e) for e in confirmed)}",
               link=link.id, expected=link.id, actual=link.id)
        return
    if not any(here.host in speaking for here, _ in ends) and not any(
            stale.get(here) for here, _ in ends) and not any(
            here.host in out.facts.errors for here, _ in ends):
        out.skip(f"{link.id}: neither end reports LLDP neighbors (lldpd on the Sparks, "
                 "/ip/neighbor discovery on the switch)", link=link.id)
        return
    _unverified(link, ends, stale, speaking, out)


#: What cabling judges: LLDP neighbours on both ends of every cable.
NEEDS = needs("cabling", spark=True, switch=True, lldp=True)


@check("cabling.lldp")
def check_lldp(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cable against fresh LLDP seen on both ends (stale entries count neither
    way; a cable without fresh evidence is an error); names the move that fixes a
    miscabling."""
    for host in [h.name for h in intent.sparks]:
        out.spark(host)
    if intent.switch is not None:
        out.switch(intent.switch.host)
    seen, speaking, stale = _observed(intent, facts)
    for link in intent.links:
        _judge_link(intent, link, seen, speaking, stale, out)
