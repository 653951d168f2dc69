"""The management LAN of a lab: a root-namespace bridge on 198.18.K.0/24 and a veth per host.

K is a per-lab slot, so several labs live side by side. Nothing outside 198.18.0.0/15 is used
and no route is added to the root namespace beyond the bridge's connected /24.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable

from fabric.lab import names, ns

MGMT_SUPERNET = ipaddress.IPv4Network("198.18.0.0/16")
BRIDGE_HOST = 254
SWITCH_FIRST = 251


def subnet(slot: int) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(f"198.18.{slot}.0/24")


def address(slot: int, index: int) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(f"198.18.{slot}.{index}/24")


def host_index(role: str, node_id: int | None, others_before: int) -> int:
    """Sparks sit at their node id, other hosts from .251 up; the bridge is .254."""
    if role == "spark" and node_id:
        return node_id
    return SWITCH_FIRST + others_before


def used_subnets() -> set[ipaddress.IPv4Network]:
    """Every 198.18.x.0/24 that an address of the root namespace sits in."""
    data = json.loads(ns.run(["ip", "-j", "-4", "addr", "show"]) or "[]")
    out: set[ipaddress.IPv4Network] = set()
    for link in data:
        for a in link.get("addr_info", []):
            net = ipaddress.IPv4Interface(f"{a['local']}/{a.get('prefixlen', 32)}").network
            if net.overlaps(MGMT_SUPERNET):
                out.add(net)
    return out


def free_slot(taken: Iterable[int]) -> int:
    """The lowest slot not used by another lab nor by any address on this machine."""
    busy = set(taken)
    used = used_subnets()
    for k in range(1, 254):
        if k not in busy and not any(subnet(k).overlaps(n) for n in used):
            return k
    raise ns.LabError("no free management slot in 198.18.0.0/16")


def root_lines(slot: int, bridge: str, veths: dict[str, tuple[str, str, str]]) -> list[str]:
    """`ip -batch` lines for the root namespace; veths maps host -> (root end, netns, inside)."""
    lines = [f"link add name {bridge} type bridge",
             f"addr add {address(slot, BRIDGE_HOST)} dev {bridge}",
             f"link set {bridge} up"]
    for root_end, netns, inside in veths.values():
        lines += [f"link add name {root_end} type veth peer name {inside} netns {netns}",
                  f"link set {root_end} master {bridge}",
                  f"link set {root_end} up"]
    return lines


def host_lines(mgmt_if: str, addr: ipaddress.IPv4Interface) -> list[str]:
    """`ip -batch` lines inside a host for its management netdev."""
    return [f"addr add {addr} dev {mgmt_if}", f"link set {mgmt_if} up", "link set lo up"]


def teardown(bridge: str, root_veths: Iterable[str]) -> None:
    """Delete the lab's root-namespace bridge and veths (those that still exist)."""
    existing = {link["ifname"] for link in json.loads(ns.run(["ip", "-j", "link"]) or "[]")}
    lines = [f"link del {v}" for v in root_veths if v in existing]
    if bridge in existing:
        lines.append(f"link del {bridge}")
    ns.ip_batch(lines, force=True)


__all__ = ["address", "free_slot", "host_lines", "names", "root_lines", "subnet", "teardown"]
