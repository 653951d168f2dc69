"""Nornir connection plugin `routeros_api`: the RouterOS API of the CRS804 (8728 plain, or
api-ssl on 8729 with the certificate verified when `use_ssl` is set; `ca_file` names the CA).

Registered by entry point (`nornir.plugins.connections`). `connection` is the logged-in
`RouterOsApi` (`get_api()`). The client has one socket and no locking, so this is one
connection per host, used by the one thread that runs that host's task. Failures raise
`RouterOsConnectError` with a short reason; the password never appears in it.
"""

from __future__ import annotations

import contextlib
import errno
import re
import socket
import ssl
from collections.abc import Callable
from typing import Any

import routeros_api
from routeros_api import exceptions as ros_exc

CONNECT_TIMEOUT_S = 10.0
_ERROR_TEXT = re.compile(r'Error "(.*?)" executing command')


class RouterOsConnectError(ConnectionError):
    """Could not reach or log in to the RouterOS API; the message says why, without secrets."""


def _socket_reason(exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.args[0] if cause.args and isinstance(cause.args[0], BaseException) else None
    if isinstance(cause, socket.timeout | TimeoutError):
        return "no answer (timed out)"
    if isinstance(cause, OSError) and cause.errno is not None:
        if cause.errno == errno.ECONNREFUSED:
            return "connection refused"
        return (cause.strerror or errno.errorcode.get(cause.errno, str(cause.errno))).lower()
    return "cannot connect"


def describe_error(exc: BaseException, password: str | None) -> str:
    """A one-line reason for a RouterOS API failure, with the password scrubbed out."""
    if isinstance(exc, ros_exc.RouterOsApiCommunicationError):
        msg = exc.args[0]
        text = msg.decode(errors="replace") if isinstance(msg, bytes) else str(msg)
        # 'Error "<reason>" executing command b'/login =name=… =password=…'': keep the reason
        if m := _ERROR_TEXT.search(text):
            text = m.group(1)
        reason = f"login refused: {text}" if "password" in text or "login" in text else text
    elif isinstance(exc, ros_exc.RouterOsApiConnectionError | OSError):
        reason = _socket_reason(exc)
    else:
        reason = f"{type(exc).__name__}: {exc}"
    if password:
        reason = reason.replace(password, "********")
    return reason


def _no_delay(pool: Any) -> None:
    """TCP_NODELAY on the API socket: the client writes a sentence in several small sends,
    and Nagle would hold each one back until the switch acknowledged the last (a delayed
    acknowledgement: 40 ms per call)."""
    sock = getattr(getattr(pool, "socket", None), "socket", None)
    with contextlib.suppress(AttributeError, OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # type: ignore[union-attr]


#: How much of the API socket one read takes at most (`BufferedReceive`).
RECEIVE_CHUNK = 65536


class BufferedReceive:
    """The API socket read a chunk at a time. routeros-api reads each word of a reply with
    two reads, its length byte and then the word (a star8 switch's facts are about 6,500
    words): every read a system call and a release of the GIL the validation's other
    threads are waiting for. This takes what the socket has (up to `RECEIVE_CHUNK`) and
    hands it out `length` bytes at a time; `read` is the library's own receive (it retries
    on EINTR and raises when the switch closed the connection)."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self.read = read
        self.data = b""
        self.at = 0

    def __call__(self, length: int) -> bytes:
        if self.at >= len(self.data):
            self.data, self.at = self.read(RECEIVE_CHUNK), 0
        out = self.data[self.at:self.at + length]
        self.at += len(out)
        return out


def _buffered(pool: Any) -> None:
    """The pool's socket read through `BufferedReceive` (its wrapper's `receive`, which the
    library's connection calls for every read)."""
    wrapper = getattr(pool, "socket", None)
    receive = getattr(wrapper, "receive", None)
    if receive is not None:
        wrapper.receive = BufferedReceive(receive)  # type: ignore[union-attr]


class RouterOsApiConnection:
    """Nornir connection plugin around `routeros_api.RouterOsApiPool` (plaintext login)."""

    def __init__(self) -> None:
        self._pool: Any = None
        self._api: Any = None

    def open(self, hostname: str | None, username: str | None, password: str | None,
             port: int | None, platform: str | None, extras: dict[str, Any] | None = None,
             configuration: Any = None) -> None:
        """Connect and log in; RouterOsConnectError (host:port and reason) on failure."""
        options = dict(extras or {})
        timeout = float(options.pop("timeout", CONNECT_TIMEOUT_S))
        options.setdefault("plaintext_login", True)
        ca_file = options.pop("ca_file", None)
        if options.get("use_ssl") and ca_file:
            options["ssl_context"] = ssl.create_default_context(cafile=str(ca_file))
        port = port or (8729 if options.get("use_ssl") else 8728)
        if not hostname:
            raise RouterOsConnectError("routeros-api: the host has no hostname/address")
        pool = routeros_api.RouterOsApiPool(hostname, username=username or "admin",
                                            password=password or "", port=port, **options)
        pool.socket_timeout = timeout
        try:
            api = pool.get_api()
        except Exception as exc:
            with contextlib.suppress(Exception):
                pool.disconnect()
            raise RouterOsConnectError(
                f"routeros-api {hostname}:{port}: {describe_error(exc, password)}") from None
        _no_delay(pool)
        _buffered(pool)
        self._pool, self._api = pool, api

    @property
    def connection(self) -> Any:
        """The logged-in RouterOsApi (`get_resource(...)`)."""
        if self._api is None:
            raise RouterOsConnectError("routeros-api: not connected")
        return self._api

    def endpoints(self) -> tuple[str, str] | None:
        """(our address, the switch's address) of this API session's TCP connection: which
        switch address we really came in on (the inventory may name a DNS name or a VPN)."""
        sock = getattr(getattr(self._pool, "socket", None), "socket", None)
        try:
            return str(sock.getsockname()[0]), str(sock.getpeername()[0])  # type: ignore[union-attr]
        except (AttributeError, OSError):
            return None

    def close(self) -> None:
        if self._pool is not None:
            with contextlib.suppress(Exception):
                self._pool.disconnect()
        self._pool = self._api = None
