"""The `routeros_api` Nornir connection plugin against the in-process emulator."""

from __future__ import annotations

import socket

import pytest

from fabric.remote.routeros_api import (
    RECEIVE_CHUNK,
    BufferedReceive,
    RouterOsApiConnection,
    RouterOsConnectError,
)

from .conftest import PASSWORD, USER, Emulator


def test_open_gives_a_logged_in_api_and_close_is_idempotent(emulator: Emulator) -> None:
    conn = RouterOsApiConnection()
    conn.open("127.0.0.1", USER, PASSWORD, emulator.port, "mikrotik_routeros",
              {"plaintext_login": True})
    rows = conn.connection.get_resource("/system/identity").get()
    assert rows[0]["name"] == "crs804"
    conn.close()
    conn.close()
    with pytest.raises(RouterOsConnectError, match="not connected"):
        _ = conn.connection


def test_bad_login_names_the_reason_never_the_password(emulator: Emulator) -> None:
    wrong = "Wr0ng-pa55word"
    with pytest.raises(RouterOsConnectError) as info:
        RouterOsApiConnection().open("127.0.0.1", USER, wrong, emulator.port, None, {})
    text = str(info.value)
    assert text == (f"routeros-api 127.0.0.1:{emulator.port}: "
                    "login refused: invalid user name or password (6)")
    assert wrong not in text and PASSWORD not in text


def test_refused_port_says_refused() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RouterOsConnectError, match="connection refused"):
        RouterOsApiConnection().open("127.0.0.1", USER, PASSWORD, port, None, {})


def test_registered_as_nornir_plugin() -> None:
    from nornir.core.plugins.connections import ConnectionPluginRegister

    ConnectionPluginRegister.auto_register()
    assert ConnectionPluginRegister.available["routeros_api"] is RouterOsApiConnection


def test_the_api_socket_is_read_a_chunk_at_a_time(emulator: Emulator) -> None:
    """routeros-api asks for every word in two reads (its length, then the word); the
    connection hands them out of one socket read for many words, and the replies are the
    same as the library's own reads give."""
    conn = RouterOsApiConnection()
    conn.open("127.0.0.1", USER, PASSWORD, emulator.port, None, {"plaintext_login": True})
    buffered = conn._pool.socket.receive
    assert isinstance(buffered, BufferedReceive)
    reads: list[int] = []
    library_read = buffered.read

    def counted(length: int) -> bytes:
        reads.append(length)
        return library_read(length)

    buffered.read = counted
    asks = 0
    original_call = BufferedReceive.__call__

    def ask(self: BufferedReceive, length: int) -> bytes:
        nonlocal asks
        asks += 1
        return original_call(self, length)

    try:
        BufferedReceive.__call__ = ask  # type: ignore[method-assign]
        rows = conn.connection.get_resource("/interface/ethernet").get()
    finally:
        BufferedReceive.__call__ = original_call  # type: ignore[method-assign]
    assert len(rows) >= 4 and all(r.get("name") for r in rows)
    assert asks > 100 and len(reads) * 10 < asks, (asks, reads)

    plain = RouterOsApiConnection()
    plain.open("127.0.0.1", USER, PASSWORD, emulator.port, None, {"plaintext_login": True})
    plain._pool.socket.receive = plain._pool.socket.receive.read  # the library's own reads
    assert plain.connection.get_resource("/interface/ethernet").get() == rows
    conn.close()
    plain.close()


def test_buffered_receive_hands_out_what_it_read_and_raises_what_the_read_raises() -> None:
    chunks = [b"abcdef", b"gh"]

    def read(length: int) -> bytes:
        assert length == RECEIVE_CHUNK
        if not chunks:
            raise ConnectionResetError("closed")
        return chunks.pop(0)

    receive = BufferedReceive(read)
    assert receive(1) == b"a"
    assert receive(3) == b"bcd"
    assert receive(5) == b"ef"  # the rest of the chunk: the library asks again for the rest
    assert receive(2) == b"gh"
    with pytest.raises(ConnectionResetError):
        receive(1)
