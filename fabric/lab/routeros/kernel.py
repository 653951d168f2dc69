"""Backend that drives the real kernel with ``ip`` and ``tc``, and opens the API server's
LLDP and rtnetlink sockets (``rawsock``).

The emulator normally runs inside the switch namespace; ``netns`` prefixes every command with
``ip netns exec NS`` (and opens the sockets in that namespace) so tests (or a supervisor outside
the namespace) can drive one from outside.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from .backend import STATS64_FIELDS, FrameSource, KernelCounters, KernelLink, LinkSource
from .rawsock import NetlinkSource, PacketSource

#: One line per netdev, ``/sys/class/net/<dev>/carrier_down_count:<n>`` (sysfs of this netns).
CARRIER_DOWNS = "grep -s -H . /sys/class/net/*/carrier_down_count"


class KernelError(RuntimeError):
    """An ``ip``/``tc`` command failed; the message carries its stderr."""


class KernelBackend:
    def __init__(self, netns: str | None = None, timeout_s: float = 10.0) -> None:
        self.netns = netns or None
        self._prefix = ["ip", "netns", "exec", netns] if netns else []
        self._timeout = timeout_s

    def _run(self, *argv: str, check: bool = True) -> str:
        proc = subprocess.run(
            [*self._prefix, *argv],
            capture_output=True,
            text=True,
            timeout=self._timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise KernelError(f"{' '.join(argv)}: {proc.stderr.strip()}")
        return proc.stdout

    def links(self) -> dict[str, KernelLink]:
        out: dict[str, KernelLink] = {}
        for item in json.loads(self._run("ip", "-j", "-d", "link", "show") or "[]"):
            flags = item.get("flags", [])
            kind = item.get("linkinfo", {}).get("info_kind", "")
            name = item["ifname"]
            out[name] = KernelLink(
                name=name,
                mtu=int(item.get("mtu", 0)),
                admin_up="UP" in flags,
                carrier="LOWER_UP" in flags,
                mac=str(item.get("address", "")).upper(),
                kind=kind,
                master=item.get("master"),
            )
        return out

    def _optional(self, *argv: str) -> str:
        """Output of a read that may fail without failing the request ("" then)."""
        try:
            return self._run(*argv, check=False)
        except (OSError, subprocess.SubprocessError):
            return ""

    def counters(self) -> dict[str, KernelCounters]:
        """stats64 must be read; carrier downs and qdisc drops that cannot be are left out."""
        links = json.loads(self._run("ip", "-s", "-s", "-j", "link", "show") or "[]")
        downs = carrier_downs(self._optional("sh", "-c", CARRIER_DOWNS))
        try:
            qdiscs = json.loads(self._optional("tc", "-s", "-j", "qdisc", "show") or "[]")
        except ValueError:
            qdiscs = []
        drops = root_qdisc_drops(qdiscs)
        out: dict[str, KernelCounters] = {}
        for item in links:
            name = item["ifname"]
            out[name] = KernelCounters(name, stats64(item), downs.get(name), drops.get(name))
        return out

    def set_mtu(self, name: str, mtu: int) -> None:
        self._run("ip", "link", "set", "dev", name, "mtu", str(mtu))

    def set_admin(self, name: str, up: bool) -> None:
        self._run("ip", "link", "set", "dev", name, "up" if up else "down")

    def add_bridge(self, name: str) -> None:
        self._run("ip", "link", "add", "name", name, "type", "bridge")
        self._run("ip", "link", "set", "dev", name, "up")

    def del_link(self, name: str) -> None:
        self._run("ip", "link", "del", "dev", name)

    def set_master(self, name: str, master: str | None) -> None:
        if master is None:
            self._run("ip", "link", "set", "dev", name, "nomaster")
        else:
            self._run("ip", "link", "set", "dev", name, "master", master)

    def shape(self, name: str, mbit: int | None) -> None:
        if mbit is None:
            qdiscs = json.loads(self._run("tc", "-j", "qdisc", "show", "dev", name) or "[]")
            if any(q.get("kind") == "tbf" and q.get("root") for q in qdiscs):
                self._run("tc", "qdisc", "del", "dev", name, "root")
            return
        # burst must hold at least one timer tick of traffic at this rate (HZ >= 100).
        burst = max(mbit * 1_000_000 // 8 // 100, 65536)
        self._run(
            "tc",
            "qdisc",
            "replace",
            "dev",
            name,
            "root",
            "tbf",
            "rate",
            f"{mbit}mbit",
            "burst",
            str(burst),
            "latency",
            "50ms",
        )

    def open_lldp(self) -> FrameSource:
        return PacketSource(self.netns)

    def open_links(self) -> LinkSource:
        return NetlinkSource(self.netns)


def stats64(item: dict[str, Any]) -> dict[str, int]:
    """``rx_bytes``, ``tx_dropped``, ... of one ``ip -s -s -j link`` entry (those it lists)."""
    groups = item.get("stats64", {})
    out: dict[str, int] = {}
    for name in STATS64_FIELDS:
        direction, _, field = name.partition("_")
        value = groups.get(direction, {}).get(field)
        if isinstance(value, int):
            out[name] = value
    return out


def carrier_downs(text: str) -> dict[str, int]:
    """``/sys/class/net/<dev>/carrier_down_count:<n>`` lines -> {dev: n}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        path, sep, value = line.rpartition(":")
        parts = path.split("/")
        if sep and len(parts) >= 2 and value.strip().isdigit():
            out[parts[-2]] = int(value)
    return out


def root_qdisc_drops(qdiscs: list[dict[str, Any]]) -> dict[str, int]:
    """{dev: drops} of each netdev's root qdisc, from ``tc -s -j qdisc show``. A netdev the
    dump leaves out has no root qdisc of its own to report (its drops stay unknown)."""
    return {
        str(q["dev"]): int(q["drops"])
        for q in qdiscs
        if q.get("root") and "dev" in q and isinstance(q.get("drops"), int)
    }
