"""api-ssl: the connection plugin verifies the switch's certificate (FABRIC_ROUTEROS_TLS=1).

The emulator speaks plain API; a TLS terminator in front of it (a test double for the
switch's api-ssl service, certificate made with openssl) stands in for port 8729.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from fabric.credentials import from_environment
from fabric.remote.nornir_setup import routeros_extras
from fabric.remote.routeros_api import RouterOsApiConnection, RouterOsConnectError
from fabric.target import Target
from tests.remote.conftest import PASSWORD, USER, Emulator


def make_cert(folder: Path, name: str) -> tuple[Path, Path]:
    assert shutil.which("openssl"), "openssl is needed (make apt)"
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return key, cert


@pytest.fixture
def tls_front(tmp_path: Path, emulator: Emulator) -> Iterator[tuple[int, Path]]:
    key, cert = make_cert(tmp_path, "switch")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                conn = ctx.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()
                continue
            back = socket.create_connection(("127.0.0.1", emulator.port))
            threading.Thread(target=pump, args=(conn, back), daemon=True).start()
            threading.Thread(target=pump, args=(back, conn), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], cert
    stop.set()
    listener.close()


def open_api(port: int, target: Target) -> RouterOsApiConnection:
    conn = RouterOsApiConnection()
    conn.open("localhost", USER, PASSWORD, port, "mikrotik_routeros", routeros_extras(target))
    return conn


def test_tls_with_the_switch_ca_logs_in(tls_front: tuple[int, Path], target: Target) -> None:
    port, cert = tls_front
    tls = replace(target, credentials=replace(target.credentials, routeros_tls=True,
                                              routeros_ca=cert))
    conn = open_api(port, tls)
    try:
        rows = conn.connection.get_resource("/system/identity").get()
        assert rows[0]["name"] == "crs804"
    finally:
        conn.close()


def test_tls_with_an_unknown_certificate_is_refused(tls_front: tuple[int, Path],
                                                    target: Target, tmp_path: Path) -> None:
    port, _ = tls_front
    _, other = make_cert(tmp_path, "other-ca")
    tls = replace(target, credentials=replace(target.credentials, routeros_tls=True,
                                              routeros_ca=other))
    with pytest.raises(RouterOsConnectError) as err:
        open_api(port, tls)
    assert PASSWORD not in str(err.value)


def test_environment_switches_to_api_ssl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_ROUTEROS_TLS", "1")
    monkeypatch.setenv("FABRIC_ROUTEROS_CA", "/etc/fabric/crs804-ca.pem")
    creds = from_environment()
    assert (creds.routeros_tls, creds.routeros_port) == (True, 8729)
    assert creds.routeros_ca == Path("/etc/fabric/crs804-ca.pem")
