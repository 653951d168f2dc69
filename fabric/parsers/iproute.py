"""iproute2 readers: ``ip -j link|addr|route`` (JSON), ``ip -br link|addr`` and ``ip addr show``."""

from __future__ import annotations

from typing import Any

from fabric.parsers.jsonread import JsonView, load_json
from fabric.parsers.kind import Kind
from fabric.parsers.records import IpAddress, IpBrief, IpLink, IpRoute, Record
from fabric.parsers.text import blank_shell_echo, opt, opt_int, text, texts
from fabric.parsers.textfsm_runner import run_template

_ECHO = ["ip"]


def _json_list(kind: str, raw: str) -> tuple[JsonView, list[Any]]:
    view = JsonView(kind, raw)
    data = view.check(load_json(kind, raw, _ECHO), list, "top level")
    return view, data


def _link(view: JsonView, item: Any, where: str) -> IpLink:
    addresses = []
    for n, info in enumerate(view.opt(item, "addr_info", list, where) or []):
        w = f"{where}.addr_info[{n}]"
        addresses.append(
            IpAddress(
                family=view.get(info, "family", str, w),
                address=view.get(info, "local", str, w),
                prefixlen=view.get(info, "prefixlen", int, w),
                scope=view.opt(info, "scope", str, w),
            )
        )
    linkinfo = view.opt(item, "linkinfo", dict, where) or {}
    flags = view.opt(item, "flags", list, where) or []
    return IpLink(
        ifname=view.get(item, "ifname", str, where),
        ifindex=view.opt(item, "ifindex", int, where),
        mtu=view.opt(item, "mtu", int, where),
        operstate=view.opt(item, "operstate", str, where),
        flags=tuple(view.check(f, str, f"{where}.flags") for f in flags),
        address=view.opt(item, "address", str, where),
        kind=view.opt(linkinfo, "info_kind", str, f"{where}.linkinfo"),
        addresses=tuple(addresses),
    )


def read_ip_links(kind: str, raw: str) -> list[Record]:
    """``ip -j [-d] link`` or ``ip -j addr``: one IpLink per interface (addresses if listed)."""
    view, data = _json_list(kind, raw)
    return [_link(view, item, f"[{n}]") for n, item in enumerate(data)]


def read_ip_route(kind: str, raw: str) -> list[Record]:
    """``ip -j route``: one IpRoute per entry; an empty table ``[]`` is valid."""
    view, data = _json_list(kind, raw)
    return [
        IpRoute(
            dst=view.get(item, "dst", str, f"[{n}]"),
            gateway=view.opt(item, "gateway", str, f"[{n}]"),
            dev=view.opt(item, "dev", str, f"[{n}]"),
            protocol=view.opt(item, "protocol", str, f"[{n}]"),
            scope=view.opt(item, "scope", str, f"[{n}]"),
            prefsrc=view.opt(item, "prefsrc", str, f"[{n}]"),
            metric=view.opt(item, "metric", int, f"[{n}]"),
        )
        for n, item in enumerate(data)
    ]


def read_ip_br(kind: str, raw: str) -> list[Record]:
    """``ip -br link`` (MAC and flags) or ``ip -br addr`` (CIDRs)."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    return [
        IpBrief(
            ifname=text(r, "IFNAME"),
            peer=opt(r, "PEER"),
            operstate=text(r, "STATE"),
            address=opt(r, "MAC"),
            flags=tuple(f for f in text(r, "FLAGS").split(",") if f),
            addresses=tuple(text(r, "ADDRESSES").split()),
        )
        for r in rows
    ]


def read_ip_addr_show(kind: str, raw: str) -> list[Record]:
    """``ip addr show`` text (prefer ``ip -j addr``): IpLinks; a bare ``| grep inet`` gives
    IpAddress records, since it names no interface."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    records: list[Record] = []
    for r in rows:
        addresses = [
            IpAddress("inet", a, int(p), s)
            for a, p, s in zip(texts(r, "INET"), texts(r, "INET_LEN"), texts(r, "INET_SCOPE"),
                               strict=True)
        ] + [
            IpAddress("inet6", a, int(p), s)
            for a, p, s in zip(texts(r, "INET6"), texts(r, "INET6_LEN"), texts(r, "INET6_SCOPE"),
                               strict=True)
        ]
        if not text(r, "IFNAME"):
            records.extend(addresses)  # a grep of the inet lines names no interface
            continue
        records.append(
            IpLink(
                ifname=text(r, "IFNAME"),
                ifindex=opt_int(r, "IFINDEX"),
                mtu=opt_int(r, "MTU"),
                operstate=opt(r, "STATE"),
                flags=tuple(f for f in text(r, "FLAGS").split(",") if f),
                address=opt(r, "MAC"),
                kind=None,
                addresses=tuple(addresses),
            )
        )
    return records


KINDS = (
    Kind("ip_link", "linux", read_ip_links, "ip -j [-d] link", template=False),
    Kind("ip_addr", "linux", read_ip_links, "ip -j addr", template=False),
    Kind("ip_route", "linux", read_ip_route, "ip -j route", template=False, empty_ok=True),
    Kind("ip_br", "linux", read_ip_br, "ip -br link / ip -br addr"),
    Kind("ip_addr_show", "linux", read_ip_addr_show, "ip addr show (text)"),
)
