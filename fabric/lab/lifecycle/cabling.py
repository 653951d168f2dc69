"""Cables as veth pairs, and a Spark's twins as two macvlans sharing one cable end.

A Spark port is one hidden veth end (`cx7-p0`, MTU 9216) with both twins on top as macvlans
(mode private, so the twins do not hear each other the way two PFs of one port would not), so a
cable to the switch is ONE veth pair whatever its twins do. On the switch the cable end is the
lane itself (`qsfp56-dd-1-1`). A cable between two Sparks goes through the lab's patch panel
(`panel`), so that it can be re-plugged without re-creating a twin. An uncabled Spark port
gets a veth whose far end stays down (no carrier).

The hidden end has no counterpart on hardware, so it must stay invisible: it never answers ARP
(`arp_ignore=8`, else it answers for the twins' addresses with its own MAC, "ARP flux") and has
no IPv6 (`disable_ipv6=1`: no link-local address, DAD or router solicitations of its own). It is
configured while still down; the twins keep the kernel's defaults, like a fresh Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.intent.model import Endpoint, Host, Intent, Link
from fabric.lab import names
from fabric.lab.lifecycle import panel

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
    """The cables to a switch, one veth pair each (Spark-to-Spark cables: `panel`)."""
    return [veth_line(lab, intent, cable_end(intent, link.a), cable_end(intent, link.b))
            for link in intent.links if not panel.is_spark_cable(intent, link)]


#: sysctls of a hidden cable end (`{dev}` is its name), set before it comes up.
HIDDEN_END_SYSCTLS = {"net.ipv4.conf.{dev}.arp_ignore": "8",
                      "net.ipv6.conf.{dev}.disable_ipv6": "1"}


def hidden_end_sysctls(lowers: list[str]) -> dict[str, str]:
    """The sysctl settings that make the hidden cable ends `lowers` silent."""
    return {k.format(dev=lower): v for lower in lowers for k, v in HIDDEN_END_SYSCTLS.items()}


def twin_lines(lower: str, twins: tuple[str, ...]) -> list[str]:
    lines = [f"link set {lower} up"]
    for twin in twins:
        lines += [f"link add link {lower} name {twin} mtu {SPARK_MTU} type macvlan mode private",
                  f"link set {twin} up"]
    return lines


def spark_lowers(host: Host) -> list[str]:
    """The hidden cable ends of a Spark, one per port."""
    return [names.lower(port) for port in sorted(host.ports)]


def spark_dark_lines(intent: Intent, host: Host) -> list[str]:
    """Inside a Spark: a dark cable end (left down) for every uncabled port."""
    cabled = {link.end_of(host.name).port for link in intent.links_of(host.name)}
    return [f"link add name {names.lower(port)} mtu {names.LOWER_MTU} type veth peer name "
            f"{names.lower(port)}{DISCONNECTED_SUFFIX} mtu {names.LOWER_MTU}"
            for port in sorted(host.ports) if port not in cabled]


def spark_twin_lines(host: Host) -> list[str]:
    """Inside a Spark: every hidden cable end up, with the twins of its port on top."""
    lines: list[str] = []
    for port, twins in sorted(host.ports.items()):
        lines += twin_lines(names.lower(port), tuple(t.netdev for t in twins))
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
