"""LLDP neighbours as topology endpoints, and which of them are fresh evidence.

An LLDP table can hold entries that say nothing about the cable plugged in now: after a
re-plug both ends keep the neighbour they no longer hear until its TTL (lldpd: 120 s by
default, RouterOS likewise), so for a while a port lists its old neighbour and its new one.
Only *fresh* entries decide (`stale` False); a stale one counts neither for nor against.

What makes an entry fresh depends on what its age counts:

- RouterOS (`age` = since the neighbour's last frame): fresh when it was certainly heard
  since this collection began (frames arrive only over the cable plugged in now; the Sparks
  announce at its start), or, on a lane whose last link change (`last-link-up-time` /
  `last-link-down-time`) is known, certainly heard after that change (`ROS_MARGIN_S`: both
  are whole seconds); else, on such a lane, stale. Where the switch
  does not say when its links changed, of several far ends the one heard most recently (by
  more than `SLACK_S`) is fresh, and a single far end is.
- lldpd (`age` = since it learned the entry or saw it *change*; identical frames do not reset
  it, so a neighbour re-heard after a swap put back looks old):
  - an entry from a Spark that announced this run's *beacon* (a custom TLV every Spark sends
    at the start of each collection, `BEACON_OUI`) is fresh only if it carries that beacon:
    the frame was heard during this run, so it came over the cable plugged in now;
  - an entry from the switch is fresh when it was certainly learned after the far lane's
    last link change (`SPARK_MARGIN_S` also absorbs the two hosts' read times), else stale;
  - anything else (a far end that did not announce, a foreign device) cannot be shown to be
    current, and is stale.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from fabric.facts import Facts, NeighborFact
from fabric.intent.model import Intent

#: Ages are whole seconds on both platforms: closer than this is a tie, not an order.
SLACK_S = 1.0
#: RouterOS: how much younger than its lane's last link change an entry must be to have been
#: heard after it (the age and the link-change time are both whole seconds).
ROS_MARGIN_S = 2.0
#: RouterOS ages are whole seconds (floored or rounded): a true age is below the printed one
#: plus this.
ROS_AGE_STEP_S = 1.0
#: lldpd on a Spark against the far lane's last link change, read on another host a moment
#: apart: whole seconds on both, plus the reads' skew.
SPARK_MARGIN_S = 5.0
#: The beacon TLV: an organizationally specific TLV under a locally administered CID (no
#: registered OUI is borrowed), subtype 1; its value changes every collection.
BEACON_OUI = "0A,66,62"
BEACON_SUBTYPE = 1


def endpoint(intent: Intent, system_name: str, port_id: str) -> str:
    """`host:port` as the topology names the far end (a twin netdev becomes its port, a host
    name may carry a domain), else `system:port` as LLDP reported it."""
    for name, spec in intent.hosts.items():
        if system_name in (name, spec.hostname) or system_name.split(".")[0] == name:
            port = next((p for p, twins in spec.ports.items()
                         if any(t.netdev == port_id for t in twins)), port_id)
            return f"{name}:{port}"
    return f"{system_name}:{port_id}"


def host_named(intent: Intent, system_name: str) -> str | None:
    """The inventory host an LLDP system name (`spark01`, `spark01.mgmt.lan`) names."""
    for name, spec in intent.hosts.items():
        if system_name in (name, spec.hostname) or system_name.split(".")[0] == name:
            return name
    return None


def new_beacon() -> str:
    """A fresh beacon value: four random bytes as lldpcli prints a TLV (`A1,0B,C2,3D`)."""
    return ",".join(f"{b:02X}" for b in secrets.token_bytes(4))


def mark_stale(neighbors: Iterable[NeighborFact], far_end: Callable[[NeighborFact], str],
               link_age_s: Mapping[str, float] | None = None,
               heard_within_s: float | None = None) -> tuple[NeighborFact, ...]:
    """RouterOS `neighbors` (ages since each neighbour's last frame) with `stale` set on the
    entries that do not describe the cable plugged in now (see the module doc). `far_end`
    names an entry's far end (`endpoint`), so a Spark's two twins count as one neighbour;
    `link_age_s` gives a local port's seconds since its last link change, where known;
    `heard_within_s`: seconds since this collection began (a frame heard since then came over
    the cable plugged in now, whatever the link did before)."""
    items = list(neighbors)
    links = link_age_s or {}

    def now(n: NeighborFact) -> bool:
        return heard_within_s is not None and heard_after(n.age_s, heard_within_s,
                                                          ROS_AGE_STEP_S)

    stale = [n.stale or (not now(n) and n.local_port in links
                         and not heard_after(n.age_s, links[n.local_port], ROS_MARGIN_S))
             for n in items]
    # each untimed port's far ends, with the age of the freshest entry from each (inf: unknown)
    ends_at: dict[str, dict[str, float]] = defaultdict(dict)
    for n, old in zip(items, stale, strict=True):
        if not old and n.local_port not in links:
            ends = ends_at[n.local_port]
            far = far_end(n)
            age = float("inf") if n.age_s is None else n.age_s
            ends[far] = min(ends.get(far, age), age)
    current = {port: _current(ends) for port, ends in ends_at.items()}
    return tuple(replace(n, stale=True) if not n.stale and (
        old or (n.local_port in current and far_end(n) != current[n.local_port])) else n
        for n, old in zip(items, stale, strict=True))


def heard_after(age_s: float | None, change_age_s: float, margin_s: float) -> bool:
    """Was an entry of age `age_s` certainly heard (learned) after a link change
    `change_age_s` ago? Both are whole seconds, so it must be younger by `margin_s`."""
    return age_s is not None and age_s + margin_s <= change_age_s


def _current(ends: dict[str, float]) -> str | None:
    """The far end an untimed port is cabled to now, None when its entries cannot tell: one
    far end is it; of several, one heard more recently than every other by > SLACK_S (every
    age known)."""
    if len(ends) == 1:
        return next(iter(ends))
    if float("inf") in ends.values():
        return None
    (far, best), (_, runner_up) = sorted(ends.items(), key=lambda e: e[1])[:2]
    return far if best + SLACK_S < runner_up else None


def judge_lldpd(intent: Intent, facts: Facts, beacon: str | None) -> Facts:
    """`facts` with `stale` set on every Spark (lldpd) entry that is not fresh evidence (see
    the module doc): an entry carrying `beacon` was heard during this run; one from the
    switch, when learned after its lane's last link change; nothing else can be shown to be
    current (a Spark that announced the beacon and whose entry lacks it is not heard now)."""
    switch = intent.switch.host if intent.switch is not None else None
    sw = facts.switch
    lane_age = ({name: lane.link_change_age_s for name, lane in sw.lanes.items()}
                if sw is not None and sw.host == switch else {})

    def fresh(n: NeighborFact) -> bool:
        if beacon and n.beacon == beacon:
            return True
        far = host_named(intent, n.system_name)
        if far is not None and far == switch:
            change = lane_age.get(n.port_id)
            return change is not None and heard_after(n.age_s, change, SPARK_MARGIN_S)
        return False  # an announcing Spark without the beacon, or nothing to time it by

    sparks = {host: dataclasses.replace(sf, neighbors=tuple(
        replace(n, stale=not fresh(n)) for n in sf.neighbors))
        for host, sf in facts.sparks.items()}
    return dataclasses.replace(facts, sparks=sparks)


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
