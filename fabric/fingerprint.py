"""The fingerprint of a fabric: the state a validation judged, small enough to re-read in seconds.

`fabric validate` stores it in the report (key `fingerprint`); `fabric gate` reads the same
state live and refuses when it differs, so a report can only open the gate for the fabric it
was made on (not for a lab rebuilt under the same name, or a twin whose MTU changed since).

Shape: `{"sparks": {"host:netdev": {...}}, "lanes": {"switch:lane": {...}}}`, one entry per
cabled twin (link state, speed, MTU, IPv4 addresses, LLDP neighbours as topology endpoints,
GIDs) and per cabled switch lane (status, rate, MTU, LLDP neighbours). Only what is
re-readable and stable while nothing changes: no counters, no ages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabric.facts import Facts, NeighborFact
from fabric.intent.model import Intent
from fabric.neighbors import endpoint

SCHEMA = "fabric.fingerprint/1"

#: The fields of a twin and of a lane, in the order a difference is named.
TWIN_FIELDS = ("admin_up", "carrier", "speed_mbps", "mtu", "addresses", "lldp", "gids")
LANE_FIELDS = ("status", "rate", "mtu", "lldp")


def _lldp(intent: Intent, neighbors: Iterable[NeighborFact], local: str) -> list[str]:
    """The fresh neighbours LLDP reports on `local`, as sorted topology endpoints."""
    return sorted({endpoint(intent, n.system_name, n.port_id) for n in neighbors
                   if n.local_port == local and not n.stale})


def fingerprint(intent: Intent, facts: Facts) -> dict[str, Any]:
    """The fingerprint of what `facts` say about the cabled twins and lanes of `intent` (hosts
    without facts are left out: a report with unreachable hosts never passes anyway)."""
    sparks: dict[str, dict[str, Any]] = {}
    for intended in intent.interfaces():
        sf = facts.sparks.get(intended.host)
        if sf is None:
            continue
        nd = sf.netdevs.get(intended.netdev)
        eth = sf.ethtool.get(intended.netdev)
        sparks[f"{intended.host}:{intended.netdev}"] = {
            "admin_up": nd.admin_up if nd else None,
            "carrier": nd.carrier if nd else None,
            "speed_mbps": eth.speed_mbps if eth else None,
            "mtu": nd.mtu if nd else None,
            "addresses": sorted(nd.addresses) if nd else [],
            "lldp": _lldp(intent, sf.neighbors, intended.netdev),
            "gids": sorted(f"{g.index}:{g.gid}:{g.gid_type}" for g in sf.gids
                           if g.netdev == intended.netdev),
        }
    lanes: dict[str, dict[str, Any]] = {}
    sw = facts.switch
    if intent.switch is not None and sw is not None and sw.host == intent.switch.host:
        for lane in intent.switch.lanes:
            if lane.link_id is None:
                continue
            fact = sw.lanes.get(lane.name)
            lanes[f"{sw.host}:{lane.name}"] = {
                "status": fact.status if fact else None,
                "rate": fact.rate if fact else None,
                "mtu": fact.mtu if fact else None,
                "lldp": _lldp(intent, sw.neighbors, lane.name),
            }
    return {"schema": SCHEMA, "sparks": sparks, "lanes": lanes}


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    return str(value)


def _section_diff(kind: str, fields: tuple[str, ...], then: Mapping[str, Any],
                  now: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in sorted(set(then) | set(now)):
        if key not in now:
            out.append(f"{key}: {kind} no longer read")
            continue
        if key not in then:
            out.append(f"{key}: {kind} not in the report")
            continue
        old, new = then[key], now[key]
        for name in fields:
            if old.get(name) != new.get(name):
                out.append(f"{key} {name} {_show(old.get(name))} -> {_show(new.get(name))}")
    return out


def diff(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What changed from the fingerprint `then` to `now`, one line each, e.g.
    `spark02:enp1s0f0np0 mtu 9000 -> 1500` (empty: the same fabric)."""
    if then.get("schema") != now.get("schema"):
        return [f"fingerprint schema {then.get('schema')} -> {now.get('schema')}"]
    return (_section_diff("twin", TWIN_FIELDS, then.get("sparks") or {}, now.get("sparks") or {})
            + _section_diff("lane", LANE_FIELDS, then.get("lanes") or {},
                            now.get("lanes") or {}))
