"""Cables as veth pairs, and a Spark's twins as two macvlans sharing one cable end.

A Spark port is one hidden veth end (`cx7-p0`, MTU 9216) with both twins on top as macvlans
(mode private, so the twins do not hear each other the way two PFs of one port would not), so a
cable is ONE veth pair whatever its twins do. On the switch the cable end is the lane itself
(`qsfp56-dd-1-1`). An uncabled Spark port gets a veth whose far end stays down (no carrier).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.intent.model import Endpoint, Host, Intent, Link
from fabric.lab import names

SPARK_MTU = 1500
LANE_MTU = 1500
DISCONNECTED_SUFFIX = "-open"


@dataclass(frozen=True)
class CableEnd:
    """The netdev that is one end of a cable, in the lab namespace of its host."""

    host: str
    port: str
    netdev: str


def cable_end(intent: Intent, ep: Endpoint) -> CableEnd:
    host = intent.hosts[ep.host]
    netdev = ep.port if host.role == "switch" else names.lower(ep.port)
    return CableEnd(ep.host, ep.port, netdev)


def _mtu(intent: Intent, end: CableEnd) -> int:
    return LANE_MTU if intent.hosts[end.host].role == "switch" else names.LOWER_MTU


def veth_line(lab: str, intent: Intent, a: CableEnd, b: CableEnd) -> str:
    """The root-namespace `ip -batch` line that lays one cable (both ends in their hosts)."""
    return (f"link add name {a.netdev} netns {names.netns(lab, a.host)} mtu {_mtu(intent, a)} "
            f"type veth peer name {b.netdev} netns {names.netns(lab, b.host)} "
            f"mtu {_mtu(intent, b)}")


def cable_lines(lab: str, intent: Intent) -> list[str]:
    return [veth_line(lab, intent, cable_end(intent, link.a), cable_end(intent, link.b))
            for link in intent.links]


def twin_lines(lower: str, twins: tuple[str, ...]) -> list[str]:
    lines = [f"link set {lower} up"]
    for twin in twins:
        lines += [f"link add link {lower} name {twin} mtu {SPARK_MTU} type macvlan mode private",
                  f"link set {twin} up"]
    return lines


def spark_lines(intent: Intent, host: Host) -> list[str]:
    """Inside a Spark: the twins of every port; an uncabled port gets a dark cable end."""
    cabled = {link.end_of(host.name).port for link in intent.links_of(host.name)}
    lines: list[str] = []
    for port, twins in sorted(host.ports.items()):
        lower = names.lower(port)
        if port not in cabled:
            lines.append(f"link add name {lower} mtu {names.LOWER_MTU} type veth peer name "
                         f"{lower}{DISCONNECTED_SUFFIX} mtu {names.LOWER_MTU}")
        lines += twin_lines(lower, tuple(t.netdev for t in twins))
    return lines


def switch_lines(intent: Intent, switch: str) -> list[str]:
    """Inside the switch: every cabled lane admin up (no bridge: push makes it)."""
    return [f"link set {link.end_of(switch).port} up" for link in intent.links_of(switch)]


def twins_of(host: Host) -> list[str]:
    return [t.netdev for _, twins in sorted(host.ports.items()) for t in twins]


def lanes_of(intent: Intent, switch: str) -> dict[str, int]:
    """Cabled lane -> cable speed in Gbit/s (the emulator's initial state)."""
    out: dict[str, int] = {}
    for link in intent.links_of(switch):
        out[link.end_of(switch).port] = link.speed_gbps
    return out


def link_by_end(intent: Intent, host: str, port: str) -> Link | None:
    for link in intent.links_of(host):
        if link.end_of(host).port == port:
            return link
    return None
