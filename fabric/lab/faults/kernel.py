"""What the faults read from and write to a namespace's kernel: links, addresses, qdiscs."""

from __future__ import annotations

import json
from typing import Any

from fabric.lab import ns
from fabric.lab.faults.records import Tbf


def link_info(netns: str, dev: str) -> dict[str, Any]:
    data = json.loads(ns.run(["ip", "-n", netns, "-j", "-d", "link", "show", "dev", dev]))
    info: dict[str, Any] = data[0]
    return info


def is_up(info: dict[str, Any]) -> bool:
    """Whether `ip -j link` says the netdev is administratively up."""
    return "UP" in info.get("flags", [])


def ipv4(netns: str, dev: str) -> list[str]:
    data = json.loads(ns.run(["ip", "-n", netns, "-j", "-4", "addr", "show", "dev", dev]))
    return [f"{a['local']}/{a['prefixlen']}" for d in data for a in d.get("addr_info", [])]


def link_set(netns: str, dev: str, *settings: str) -> None:
    """`ip -n NETNS link set dev DEV SETTINGS...`."""
    ns.run(["ip", "-n", netns, "link", "set", "dev", dev, *settings])


def root_tbf(netns: str, dev: str) -> Tbf | None:
    data = json.loads(ns.run(["ip", "netns", "exec", netns, "tc", "-j", "qdisc", "show",
                              "dev", dev]) or "[]")
    for q in data:
        if q.get("kind") == "tbf" and q.get("root"):
            opts = q.get("options", {})
            return Tbf(rate=int(opts.get("rate", 0)), burst=int(opts.get("burst", 0)))
    return None


def set_tbf(netns: str, dev: str, tbf: Tbf | None) -> None:
    tc = ["ip", "netns", "exec", netns, "tc", "qdisc"]
    if tbf is None:
        if root_tbf(netns, dev) is not None:
            ns.run([*tc, "del", "dev", dev, "root"])
        return
    ns.run([*tc, "replace", "dev", dev, "root", "tbf", "rate", f"{tbf.rate * 8}bit",
            "burst", str(max(tbf.burst, 1 << 20)), "latency", "50ms"])


def qdiscs(netns: str, dev: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        ns.run(ns.in_ns(netns, ["tc", "-j", "qdisc", "show", "dev", dev])) or "[]")
    return data
