"""The `routeros_api` Nornir connection plugin against the in-process emulator."""

from __future__ import annotations

import socket

import pytest

from fabric.remote.routeros_api import RouterOsApiConnection, RouterOsConnectError

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
