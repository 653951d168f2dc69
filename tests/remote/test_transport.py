"""The Spark sessions' TCP socket (`fabric.remote.transport.open_socket`): TCP_NODELAY, and a
refused connection raised as the OSError the failure reasons read."""

from __future__ import annotations

import socket

import pytest

from fabric.remote.transport import open_socket


def test_open_socket_sets_tcp_nodelay() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with open_socket("127.0.0.1", port, 5.0) as sock:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
            assert sock.getpeername() == ("127.0.0.1", port)


def test_open_socket_refused_is_connection_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    with pytest.raises(ConnectionRefusedError):
        open_socket("127.0.0.1", port, 5.0)
