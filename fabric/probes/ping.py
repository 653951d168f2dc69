"""Ping matrix: every pair of twins that share a subnet, both directions, jumbo and small.

A jumbo ``ping -M do -s MTU-28`` that is lost while the small one gets through is a silent
black hole (a smaller MTU somewhere on the same L2); both lost is an unreachable peer.
PingFact.size is the ICMP payload (the ``-s`` value): MTU - 28 for the jumbo probe.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from fabric.errors import ParseError
from fabric.facts import PingFact
from fabric.intent.model import Intent, InterfacePlan
from fabric.parsers import parse
from fabric.parsers.records import PingResult

IP_ICMP_HEADERS = 28
SMALL_PAYLOAD = 56
COUNT = 3
INTERVAL_S = 0.2
WAIT_S = 1

_PING_MSG = re.compile(r"^ping:\s+(?P<msg>.*\S)\s*$")
_PARSED_MSG = re.compile(r"^local error: message too long")


@dataclass(frozen=True)
class PingProbe:
    """One planned ping: from a twin (bound with -I) to a twin's address, DF set."""

    src_host: str
    src_netdev: str
    dst_host: str
    dst_netdev: str
    dst_addr: str
    payload: int
    link_id: str | None

    def command(self) -> str:
        return (f"ping -n -M do -s {self.payload} -c {COUNT} -i {INTERVAL_S} -W {WAIT_S} "
                f"-I {self.src_netdev} {self.dst_addr}")


def plan_ping_matrix(intent: Intent, sources: Iterable[str] | None = None,
                     small: int = SMALL_PAYLOAD,
                     targets: Iterable[str] | None = None) -> list[PingProbe]:
    """Probes for every ordered pair of twins in one subnet (from `sources` only and to
    `targets` only, if given)."""
    wanted = None if sources is None else set(sources)
    peers = None if targets is None else set(targets)
    by_subnet: dict[str, list[InterfacePlan]] = defaultdict(list)
    for iface in intent.interfaces():
        by_subnet[str(iface.address.network)].append(iface)
    sizes = sorted({intent.mtu - IP_ICMP_HEADERS, small}, reverse=True)
    probes: list[PingProbe] = []
    for subnet in sorted(by_subnet):
        members = by_subnet[subnet]
        for src in members:
            if wanted is not None and src.host not in wanted:
                continue
            for dst in members:
                if dst.host == src.host or (peers is not None and dst.host not in peers):
                    continue
                link = src.link_id if src.link_id == dst.link_id else None
                probes.extend(PingProbe(src.host, src.netdev, dst.host, dst.netdev,
                                        str(dst.address.ip), size, link) for size in sizes)
    return probes


def probes_by_host(probes: Iterable[PingProbe]) -> dict[str, list[PingProbe]]:
    out: dict[str, list[PingProbe]] = defaultdict(list)
    for p in probes:
        out[p.src_host].append(p)
    return dict(out)


def ping_fact(probe: PingProbe, output: str, exit_code: int | None) -> PingFact:
    """The PingFact of one probe from its raw output (errors become `error`, never raise)."""
    messages, kept = [], []
    for line in output.splitlines():
        msg = _PING_MSG.match(line)
        if msg and not _PARSED_MSG.match(msg.group("msg")):
            if "Warning" not in msg.group("msg"):
                messages.append(msg.group("msg"))
            continue
        kept.append(line)
    if exit_code is None:
        return _fact(probe, 0, 0, "no output came back")
    result: PingResult | None = None
    try:
        records = parse("ping", "\n".join(kept) + "\n") if any(
            ln.startswith("PING") for ln in kept) else []
        result = next((r for r in records if isinstance(r, PingResult)), None)
    except ParseError as exc:
        messages.append(str(exc))
    if result is None:
        return _fact(probe, 0, 0, "; ".join(messages) or f"ping exited {exit_code}")
    sent, received = result.transmitted or 0, result.received or 0
    if result.local_mtu is not None:
        messages.insert(0, f"local error: message too long, mtu={result.local_mtu}")
    if result.path_mtu is not None:
        messages.insert(0, f"frag needed and DF set (mtu = {result.path_mtu})")
    error = "; ".join(dict.fromkeys(messages)) or None
    return _fact(probe, sent, received, error)


def _fact(probe: PingProbe, sent: int, received: int, error: str | None) -> PingFact:
    return PingFact(src_host=probe.src_host, src_netdev=probe.src_netdev,
                    dst_host=probe.dst_host, dst_netdev=probe.dst_netdev,
                    dst_addr=probe.dst_addr, size=probe.payload, sent=sent, received=received,
                    error=error, link_id=probe.link_id)
