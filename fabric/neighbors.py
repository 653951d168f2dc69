"""LLDP neighbours as topology endpoints, and which of them are stale.

An LLDP table can hold entries that say nothing about the cable plugged in now: lldpd keeps a
neighbour it no longer hears until its TTL (120 s by default), RouterOS likewise. Per local
port only current entries count; an entry is stale when

- it is older than the port's last link change, where the platform says when that was
  (RouterOS `last-link-up-time`): it was heard over an earlier cable;
- RouterOS (`age` = since the neighbour's last frame): another neighbour on the same port was
  heard more recently (by more than `SLACK_S`): the freshest is the cable plugged in now; with
  no clear freshest (a tie, an age not reported) none of them is judged;
- lldpd (`age` = since lldpd learned or last saw a *change* in the entry; identical frames do
  not reset it): the port lists more than one neighbour. The youngest is then not
  necessarily the one still heard: after a cable was swapped and put back within the TTL,
  the swapped-in neighbour is younger than the one plugged in again. All of them are stale,
  and the far end of the cable (or a later run) decides.

The kernel keeps no time of a carrier change (`carrier_changes` is a count), but lldpd drops
a port's neighbours when it sees the port down (a real unplug takes seconds), so on the
Sparks a single entry is from the current link.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from fabric.facts import NeighborFact
from fabric.intent.model import Intent

#: Ages are whole seconds on both platforms: closer than this is a tie, not an order.
SLACK_S = 1.0


def endpoint(intent: Intent, system_name: str, port_id: str) -> str:
    """`host:port` as the topology names the far end (a twin netdev becomes its port, a host
    name may carry a domain), else `system:port` as LLDP reported it."""
    for name, spec in intent.hosts.items():
        if system_name in (name, spec.hostname) or system_name.split(".")[0] == name:
            port = next((p for p, twins in spec.ports.items()
                         if any(t.netdev == port_id for t in twins)), port_id)
            return f"{name}:{port}"
    return f"{system_name}:{port_id}"


def mark_stale(neighbors: Iterable[NeighborFact], far_end: Callable[[NeighborFact], str],
               link_age_s: Mapping[str, float] | None = None,
               by_last_frame: bool = True) -> tuple[NeighborFact, ...]:
    """`neighbors` with `stale` set on the entries that do not describe the cable plugged in
    now (see the module doc). `far_end` names an entry's far end (`endpoint`), so a Spark's
    two twins count as one neighbour; `link_age_s` gives a local port's seconds since its
    last link change, where known; `by_last_frame`: the ages count from each neighbour's
    last frame (RouterOS), else from when the entry was learned (lldpd). Of several far ends
    on one port, at most one stays current."""
    items = list(neighbors)
    links = link_age_s or {}
    stale = [n.stale or (n.age_s is not None and n.local_port in links
                         and n.age_s > links[n.local_port] + SLACK_S) for n in items]
    # each port's far ends, with the age of the freshest entry from each (inf: unknown)
    ends_at: dict[str, dict[str, float]] = defaultdict(dict)
    for n, old in zip(items, stale, strict=True):
        if not old:
            ends = ends_at[n.local_port]
            far = far_end(n)
            age = float("inf") if n.age_s is None else n.age_s
            ends[far] = min(ends.get(far, age), age)
    current = {port: _current(ends, by_last_frame) for port, ends in ends_at.items()}
    return tuple(replace(n, stale=True) if not n.stale and (
        old or far_end(n) != current[n.local_port]) else n
        for n, old in zip(items, stale, strict=True))


def _current(ends: dict[str, float], by_last_frame: bool) -> str | None:
    """The far end a port is cabled to now, None when its entries cannot tell: one far end is
    it; of several, by last frame, one heard more recently than every other by > SLACK_S
    (every age known)."""
    if len(ends) == 1:
        return next(iter(ends))
    if not by_last_frame or float("inf") in ends.values():
        return None
    (far, best), (_, runner_up) = sorted(ends.items(), key=lambda e: e[1])[:2]
    return far if best + SLACK_S < runner_up else None


_LLDPD_AGE = re.compile(r"^\s*(\d+)\s+days?,\s+(\d+):(\d\d):(\d\d)\s*$")
_ROS_PART = re.compile(r"(\d+)(w|d|h|ms|m|s)")
_ROS_UNIT = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_CLOCK = re.compile(r"^(?:(\d+)d)?\s*(\d+):(\d\d):(\d\d)(?:\.\d+)?$")


def age_seconds(text: str | None) -> float | None:
    """An age as lldpcli (`0 day, 00:01:58`) or RouterOS (`1m5s`, `1d02:03:04`, `00:00:10`)
    prints it, in seconds; None when absent or unrecognised."""
    if text is None:
        return None
    text = text.strip()
    if m := _LLDPD_AGE.match(text):
        d, h, mi, s = (int(g) for g in m.groups())
        return float(((d * 24 + h) * 60 + mi) * 60 + s)
    if m := _CLOCK.match(text):
        d, h, mi, s = (int(g or 0) for g in m.groups())
        return float(((d * 24 + h) * 60 + mi) * 60 + s)
    parts = _ROS_PART.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        return sum(int(n) * _ROS_UNIT[u] for n, u in parts)
    return None
