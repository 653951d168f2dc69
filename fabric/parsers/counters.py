"""Counter readers: kernel interface statistics (``ip -s -s -j link``) and RDMA port hardware
counters (``grep -H . /sys/class/infiniband/*/ports/*/hw_counters/*``).

``ethtool -S`` is read by the ``ethtool_S`` kind (``fabric.parsers.ethtool``). Counters are
taken as printed; a counter the tool did not print is absent from the record, never zero.
"""

from __future__ import annotations

from typing import Any

from fabric.parsers.jsonread import JsonView, load_json
from fabric.parsers.kind import Kind
from fabric.parsers.records import IpLinkStats, RdmaHwCounter, Record
from fabric.parsers.text import blank_shell_echo, text
from fabric.parsers.textfsm_runner import run_template

#: iproute2 prints ``stats64`` (or ``stats`` on kernels without 64-bit counters).
_STATS_KEYS = ("stats64", "stats")
#: Under ``tx`` but a property of the link, not of transmission: kept without the prefix.
_LINK_KEYS = frozenset({"carrier_changes"})


def _counters(view: JsonView, stats: Any, where: str) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for direction in ("rx", "tx"):
        block = view.get(stats, direction, dict, where)
        for key, value in block.items():
            count = view.check(value, int, f"{where}.{direction}.{key}")
            out.append((key if key in _LINK_KEYS else f"{direction}_{key}", count))
    return tuple(out)


def read_ip_link_stats(kind: str, raw: str) -> list[Record]:
    """``ip -s [-s] -j link``: one IpLinkStats per interface; an interface printed without
    statistics (``ip`` run without ``-s``) is a ParseError."""
    view = JsonView(kind, raw)
    data = view.check(load_json(kind, raw, ["ip"]), list, "top level")
    records: list[Record] = []
    for n, item in enumerate(data):
        where = f"[{n}]"
        key = next((k for k in _STATS_KEYS if isinstance(item, dict) and k in item), None)
        if key is None:
            raise view.fail(f"{where}.ifname", "no statistics (run ip with -s -s)")
        records.append(IpLinkStats(
            ifname=view.get(item, "ifname", str, where),
            ifindex=view.opt(item, "ifindex", int, where),
            operstate=view.opt(item, "operstate", str, where),
            counters=_counters(view, view.get(item, key, dict, where), f"{where}.{key}"),
        ))
    return records


def read_sysfs_hw_counters(kind: str, raw: str) -> list[Record]:
    """``grep -H . .../ports/*/hw_counters/*``: one RdmaHwCounter per line, in output order."""
    rows = run_template(kind, blank_shell_echo(raw, ["grep"]))
    return [
        RdmaHwCounter(rdma_device=text(r, "RDMA_DEVICE"), port=int(text(r, "PORT")),
                      name=text(r, "NAME"), value=int(text(r, "VALUE")))
        for r in rows
    ]


KINDS = (
    Kind("ip_link_stats", "linux", read_ip_link_stats, "ip -s -s -j link (kernel counters)",
         template=False),
    Kind("sysfs_hw_counters", "linux", read_sysfs_hw_counters,
         "RDMA port hw_counters via grep -H . /sys/class/infiniband/*/ports/*/hw_counters/*"),
)
