"""Fixtures: a state file, a fake kernel, and an API server on 127.0.0.1 with a raw client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import routeros_api

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.server import ApiServer
from fabric.lab.routeros.state import StateFile, write_initial_state

from .helpers import CABLED, PASSWORD, USER, Lab, RawClient


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", CABLED, USER, PASSWORD)
    backend = FakeBackend({name: 1500 for name in CABLED})
    device = Device(StateFile(path), backend, line_rate_mbit=10000)
    device.reconcile()
    server = ApiServer(("127.0.0.1", 0), device)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield Lab(device, backend, server, path)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def raw(lab: Lab) -> Iterator[RawClient]:
    client = RawClient(lab.port)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def api(lab: Lab) -> Iterator[routeros_api.api.RouterOsApi]:
    pool = routeros_api.RouterOsApiPool(
        "127.0.0.1", username=USER, password=PASSWORD, port=lab.port, plaintext_login=True
    )
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()
