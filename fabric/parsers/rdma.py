"""Readers for RDMA device tools: show_gids, ibdev2netdev, rdma link, ibv_devinfo, sysfs."""

from __future__ import annotations

import re

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import (
    GidEntry,
    IbPortAttrs,
    IbvGid,
    IbvPort,
    RdmaLink,
    RdmaNetdev,
    Record,
)
from fabric.parsers.text import blank_shell_echo, opt, opt_int, text, texts
from fabric.parsers.textfsm_runner import run_template


def read_show_gids(kind: str, raw: str) -> list[Record]:
    """``show_gids``: one GidEntry per row; the ``n_gids_found`` footer is checked."""
    rows = run_template(kind, blank_shell_echo(raw, ["show_gids"]))
    entries: list[Record] = []
    for row in rows:
        if opt(row, "GID") is None:
            found = int(text(row, "N_GIDS"))
            if found != len(entries):
                lines = raw.splitlines()
                number = next(i for i, ln in enumerate(lines, 1) if ln.startswith("n_gids_found"))
                raise ParseError(kind, number, lines[number - 1], f"{len(entries)} rows listed")
            continue
        entries.append(
            GidEntry(
                device=text(row, "DEV"),
                port=int(text(row, "PORT")),
                index=int(text(row, "INDEX")),
                gid=text(row, "GID"),
                ipv4=opt(row, "IPV4"),
                roce_version=text(row, "VER"),
                netdev=opt(row, "NETDEV"),
            )
        )
    return entries


def read_ibdev2netdev(kind: str, raw: str) -> list[Record]:
    """``ibdev2netdev``: RDMA device -> netdev with Up/Down/NA, in the tool's order."""
    rows = run_template(kind, blank_shell_echo(raw, ["ibdev2netdev"]))
    return [
        RdmaNetdev(
            rdma_device=text(r, "RDMA_DEVICE"),
            port=int(text(r, "PORT")),
            netdev=text(r, "NETDEV"),
            state=text(r, "STATE"),
        )
        for r in rows
    ]


def read_rdma_link(kind: str, raw: str) -> list[Record]:
    """``rdma link show``."""
    rows = run_template(kind, blank_shell_echo(raw, ["rdma"]))
    return [
        RdmaLink(
            rdma_device=text(r, "RDMA_DEVICE"),
            port=int(text(r, "PORT")),
            state=text(r, "STATE"),
            physical_state=text(r, "PHYSICAL_STATE"),
            netdev=opt(r, "NETDEV"),
        )
        for r in rows
    ]


def read_ibv_devinfo(kind: str, raw: str) -> list[Record]:
    """``ibv_devinfo [-v]``: one IbvPort per HCA port, with its GIDs when ``-v`` listed them."""
    rows = run_template(kind, blank_shell_echo(raw, ["ibv_devinfo"]))
    ports: list[Record] = []
    for r in rows:
        gids = tuple(
            IbvGid(index=int(i), gid=g, gid_type=t)
            for i, g, t in zip(
                texts(r, "GID_INDEX"), texts(r, "GID"), texts(r, "GID_TYPE"), strict=True
            )
        )
        ports.append(
            IbvPort(
                hca_id=opt(r, "HCA_ID"),
                fw_ver=opt(r, "FW_VER"),
                node_guid=opt(r, "NODE_GUID"),
                sys_image_guid=opt(r, "SYS_IMAGE_GUID"),
                vendor_part_id=opt_int(r, "VENDOR_PART_ID"),
                board_id=opt(r, "BOARD_ID"),
                port=opt_int(r, "PORT"),
                state=opt(r, "STATE"),
                phys_state=opt(r, "PHYS_STATE"),
                max_mtu=opt_int(r, "MAX_MTU"),
                active_mtu=opt_int(r, "ACTIVE_MTU"),
                link_layer=opt(r, "LINK_LAYER"),
                gids=gids,
            )
        )
    return ports


def read_sysfs_ib_port(kind: str, raw: str) -> list[Record]:
    """Per-device ``ports/1/rate`` and ``ports/1/state`` pasted on one line each."""
    rows = run_template(kind, blank_shell_echo(raw, ["cat", "paste"]))
    return [
        IbPortAttrs(
            rdma_device=text(r, "RDMA_DEVICE"),
            rate_gbps=float(text(r, "RATE")),
            width=text(r, "WIDTH"),
            speed_name=text(r, "SPEED_NAME"),
            state_code=int(text(r, "STATE_CODE")),
            state=text(r, "STATE"),
        )
        for r in rows
    ]


# `grep -H . .../ports/*/gids/* .../ports/*/gid_attrs/{types,ndevs}/* 2>&1`
_SYSFS_LINE = re.compile(
    r"^(?:grep: )?/sys/class/infiniband/(?P<dev>[^/\s]+)/ports/(?P<port>\d+)/"
    r"(?P<attr>gids|gid_attrs/types|gid_attrs/ndevs)/(?P<index>\d+):\s?(?P<value>.*)$"
)
_GID = re.compile(r"^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$")
_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
_GID_TYPES = {"RoCE v2": "v2", "IB/RoCE v1": "v1"}
_EMPTY_SLOT_ERRORS = ("Invalid argument", "No data available")


def read_sysfs_gids(kind: str, raw: str) -> list[Record]:
    """GID table from sysfs, read with ``grep -H . gids/* gid_attrs/types/* gid_attrs/ndevs/*``.

    Empty slots (all-zero GID, EINVAL on ``types/N``) are skipped, as show_gids does.
    """
    slots: dict[tuple[str, int, int], dict[str, str]] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        match = _SYSFS_LINE.match(line)
        if match is None:
            raise ParseError(kind, number, line, "not a gids/gid_attrs line")
        key = (match["dev"], int(match["port"]), int(match["index"]))
        value = match["value"].strip()
        attr = match["attr"]
        if line.startswith("grep: "):
            if not value.endswith(_EMPTY_SLOT_ERRORS):
                raise ParseError(kind, number, line, "unexpected read error")
            slots.setdefault(key, {})[attr] = ""
            continue
        if attr == "gids" and not _GID.match(value):
            raise ParseError(kind, number, line, "not a GID")
        if attr == "gid_attrs/types" and value not in _GID_TYPES:
            raise ParseError(kind, number, line, "unknown GID type")
        slots.setdefault(key, {})[attr] = value
    entries: list[Record] = []
    for (dev, port, index), attrs in sorted(slots.items()):
        gid = attrs.get("gids", "")
        gid_type = attrs.get("gid_attrs/types", "")
        if not gid or gid == _ZERO_GID or not gid_type:
            continue
        entries.append(
            GidEntry(
                device=dev,
                port=port,
                index=index,
                gid=gid,
                ipv4=_ipv4_of(gid),
                roce_version=_GID_TYPES[gid_type],
                netdev=attrs.get("gid_attrs/ndevs") or None,
            )
        )
    return entries


def _ipv4_of(gid: str) -> str | None:
    groups = gid.split(":")
    if groups[:6] != ["0000"] * 5 + ["ffff"]:
        return None
    packed = int(groups[6] + groups[7], 16)
    return ".".join(str((packed >> shift) & 0xFF) for shift in (24, 16, 8, 0))


KINDS = (
    Kind("show_gids", "linux", read_show_gids, "show_gids GID table"),
    Kind("ibdev2netdev", "linux", read_ibdev2netdev, "ibdev2netdev device -> netdev map"),
    Kind("rdma_link", "linux", read_rdma_link, "rdma link show"),
    Kind("ibv_devinfo", "linux", read_ibv_devinfo, "ibv_devinfo [-v] HCA ports and GIDs"),
    Kind("sysfs_ib_port", "linux", read_sysfs_ib_port, "sysfs ports/1/{rate,state} per device"),
    Kind(
        "sysfs_gids",
        "linux",
        read_sysfs_gids,
        "sysfs GID table via grep -H . gids/* gid_attrs/types/* gid_attrs/ndevs/*",
        template=False,
    ),
)
