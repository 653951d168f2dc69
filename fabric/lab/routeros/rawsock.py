"""The API server's kernel sockets: LLDP frames (AF_PACKET) and link events (rtnetlink).

Both are opened in the switch namespace: the process's own (the server runs inside it), or the
one named ``netns`` (a test or supervisor outside it): a short-lived thread enters it with
setns(2), makes the socket and ends; a socket stays in the namespace it was made in.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import threading
import time

from .lldp import ETH_P_LLDP
from .netlink import RTMGRP_LINK, LinkEvent, dump_request, parse_datagram

CLONE_NEWNET = 0x40000000
RCVBUF = 1 << 20
_MAX_BATCH = 256


def _enter_netns(netns: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{netns}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {netns}: {os.strerror(err)}")
    finally:
        os.close(fd)


def open_socket(netns: str | None, family: int, kind: int, proto: int) -> socket.socket:
    """A socket in this process's namespace, or in ``netns`` (/run/netns/NAME)."""
    if netns is None:
        return socket.socket(family, kind, proto)
    made: list[socket.socket] = []
    failed: list[BaseException] = []

    def enter_and_make() -> None:
        try:
            _enter_netns(netns)
            made.append(socket.socket(family, kind, proto))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=enter_and_make, name=f"netns-{netns}")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return made[0]


class PacketSource:
    """LLDP frames from every interface of the namespace: an AF_PACKET SOCK_RAW socket for
    ethertype 0x88cc, bound to none. Being a protocol handler, it also makes the kernel stop
    counting LLDP as ``rx_dropped`` on bridged lanes (nothing else takes 0x88cc there)."""

    def __init__(self, netns: str | None = None) -> None:
        self.sock = open_socket(netns, socket.AF_PACKET, socket.SOCK_RAW,
                                socket.htons(ETH_P_LLDP))  # fmt: skip
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)

    def recv(self, timeout: float) -> list[tuple[str, bytes]]:
        """(interface name, frame) of the frames received, waiting up to ``timeout`` for the
        first. The name is the kernel's at receive time; frames this host sent are skipped."""
        self.sock.settimeout(timeout)
        out: list[tuple[str, bytes]] = []
        while len(out) < _MAX_BATCH:
            try:
                data, addr = self.sock.recvfrom(65535)
            except (TimeoutError, BlockingIOError):
                break
            self.sock.setblocking(False)  # then only what is queued already: with a
            # timeout, a read after the last frame would wait all of it again
            ifname, pkttype = addr[0], addr[2]
            if pkttype != socket.PACKET_OUTGOING and ifname:
                out.append((ifname, data))
        return out

    def close(self) -> None:
        self.sock.close()


class NetlinkSource:
    """RTM_NEWLINK/RTM_DELLINK of the namespace (NETLINK_ROUTE, group RTMGRP_LINK)."""

    def __init__(self, netns: str | None = None) -> None:
        self.sock = open_socket(netns, socket.AF_NETLINK, socket.SOCK_RAW,
                                socket.NETLINK_ROUTE)  # fmt: skip
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.bind((0, RTMGRP_LINK))
        self._seq = 0

    def _read(self) -> tuple[list[LinkEvent], bool, bool]:
        """(events, the datagram ended a dump, events were lost before it)."""
        try:
            events, done = parse_datagram(self.sock.recv(RCVBUF))
        except OSError as exc:
            if exc.errno != errno.ENOBUFS:
                raise
            return [], False, True
        return events, done, False

    def _request_dump(self) -> None:
        self._seq += 1
        self.sock.send(dump_request(self._seq))

    def dump(self, timeout: float = 5.0) -> list[LinkEvent]:
        """Every netdev now (and the events that came meanwhile), once the dump ends."""
        self._request_dump()
        deadline = time.monotonic() + timeout
        events: list[LinkEvent] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("rtnetlink link dump did not end")
            self.sock.settimeout(left)
            got, done, lost = self._read()
            events += got
            if lost:  # the dump itself may be cut: ask again (repeats are harmless)
                self._request_dump()
            elif done:
                return events

    def recv(self, timeout: float) -> list[LinkEvent]:
        """The events that come within ``timeout`` (after lost ones, a fresh dump)."""
        self.sock.settimeout(timeout)
        events: list[LinkEvent] = []
        while len(events) < _MAX_BATCH:
            try:
                got, _done, lost = self._read()
            except (TimeoutError, BlockingIOError):
                break
            events += got
            if lost:
                return events + self.dump()
            self.sock.setblocking(False)  # then only what is queued already
        return events

    def close(self) -> None:
        self.sock.close()
