"""Carrier changes from rtnetlink (RTM_NEWLINK/RTM_DELLINK), and each port's link history.

The history is kept per interface NAME, as the name is when the event comes: in the lab a
re-plugged cable is two lane netdevs renamed while down, so the name is the physical port and
its history follows the name. A link is up when the netdev has IFF_LOWER_UP and IFF_RUNNING.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK = 16, 17, 18
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTMGRP_LINK = 0x1
IFLA_IFNAME = 3
IFF_UP, IFF_RUNNING, IFF_LOWER_UP = 0x1, 0x40, 0x10000
_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_IFINFOMSG = struct.Struct("=BxHiII")  # family, type, index, flags, change
_RTATTR = struct.Struct("=HH")  # len, type


def _align(n: int) -> int:
    return (n + 3) & ~3


@dataclass(frozen=True)
class LinkEvent:
    """A netdev as one RTM_NEWLINK (or RTM_DELLINK: ``deleted``) reports it."""

    index: int
    name: str
    carrier: bool
    deleted: bool = False


def dump_request(seq: int = 1) -> bytes:
    """RTM_GETLINK with NLM_F_DUMP: every netdev of the namespace, one RTM_NEWLINK each."""
    body = _IFINFOMSG.pack(0, 0, 0, 0, 0)
    header = _NLMSGHDR.pack(_NLMSGHDR.size + len(body), RTM_GETLINK,
                            NLM_F_REQUEST | NLM_F_DUMP, seq, 0)  # fmt: skip
    return header + body


def _ifname(attrs: bytes) -> str | None:
    pos = 0
    while pos + _RTATTR.size <= len(attrs):
        length, kind = _RTATTR.unpack_from(attrs, pos)
        if length < _RTATTR.size or pos + length > len(attrs):
            return None
        if kind == IFLA_IFNAME:
            raw = attrs[pos + _RTATTR.size : pos + length]
            return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
        pos += _align(length)
    return None


def parse_datagram(data: bytes) -> tuple[list[LinkEvent], bool]:
    """The link events in one datagram of netlink messages (others and malformed ones are
    skipped), and whether it ends a dump (NLMSG_DONE, or NLMSG_ERROR)."""
    events: list[LinkEvent] = []
    done = False
    pos = 0
    while pos + _NLMSGHDR.size <= len(data):
        length, kind, _flags, _seq, _pid = _NLMSGHDR.unpack_from(data, pos)
        if length < _NLMSGHDR.size or pos + length > len(data):
            break
        body = data[pos + _NLMSGHDR.size : pos + length]
        pos += _align(length)
        done = done or kind in (NLMSG_DONE, NLMSG_ERROR)
        if kind not in (RTM_NEWLINK, RTM_DELLINK) or len(body) < _IFINFOMSG.size:
            continue
        _family, _type, index, flags, _change = _IFINFOMSG.unpack_from(body)
        name = _ifname(body[_IFINFOMSG.size :])
        if name is None:
            continue
        carrier = kind == RTM_NEWLINK and bool(flags & IFF_LOWER_UP) and bool(flags & IFF_RUNNING)
        events.append(LinkEvent(index, name, carrier, deleted=kind == RTM_DELLINK))
    return events, done


def done_message() -> bytes:
    """NLMSG_DONE (tests)."""
    return _NLMSGHDR.pack(_NLMSGHDR.size + 4, NLMSG_DONE, 0, 0, 0) + bytes(4)


def newlink_message(index: int, name: str, flags: int, kind: int = RTM_NEWLINK) -> bytes:
    """One RTM_NEWLINK (tests): the ifinfomsg and an IFLA_IFNAME attribute."""
    raw = name.encode() + b"\0"
    attr = _RTATTR.pack(_RTATTR.size + len(raw), IFLA_IFNAME) + raw
    attr += bytes(_align(len(attr)) - len(attr))
    body = _IFINFOMSG.pack(0, 1, index, flags, 0xFFFFFFFF) + attr
    return _NLMSGHDR.pack(_NLMSGHDR.size + len(body), kind, 0, 0, 0) + body


@dataclass(frozen=True)
class LinkTimes:
    """When a port's link last came up / went down (epoch seconds; None: not since start)."""

    up: float | None = None
    down: float | None = None


class LinkHistory:
    """Carrier transitions per interface name. The first sight of a name (the start-up dump,
    a new or renamed netdev) with carrier counts as its link coming up then; without carrier
    it records nothing (a port that never had a link has no up time)."""

    def __init__(self) -> None:
        self._carrier: dict[str, bool] = {}
        self._names: dict[int, str] = {}
        self._times: dict[str, LinkTimes] = {}

    def _set(self, name: str, carrier: bool, now: float) -> bool:
        known = self._carrier.get(name)
        self._carrier[name] = carrier
        if known == carrier or (known is None and not carrier):
            return False
        times = self._times.get(name, LinkTimes())
        self._times[name] = LinkTimes(now, times.down) if carrier else LinkTimes(times.up, now)
        return True

    def observe(self, event: LinkEvent, now: float) -> bool:
        """Take one event; whether a link came up or went down."""
        changed = False
        old = self._names.get(event.index)
        if old is not None and old != event.name:  # renamed: that name has no netdev now
            changed = self._set(old, False, now)
        if event.deleted:
            self._names.pop(event.index, None)
            return self._set(event.name, False, now) or changed
        self._names[event.index] = event.name
        return self._set(event.name, event.carrier, now) or changed

    def times(self) -> dict[str, LinkTimes]:
        return dict(self._times)
