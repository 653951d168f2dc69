"""Fixtures: a state file, a fake kernel, and an API server on 127.0.0.1 with a raw client."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import routeros_api

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.clock import Clock
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.server import ApiServer
from fabric.lab.routeros.state import NO_DEFAULTS, StateFile, write_initial_state

from .helpers import CABLED, MGMT_ADDRESS, PASSWORD, USER, Lab, RawClient

#: make_lab(config=..., training_s=..., mgmt_address=..., clock=..., chip_family=...) -> a running
#: emulator on a fake kernel
MakeLab = Callable[..., Lab]


@pytest.fixture
def make_lab(tmp_path: Path) -> Iterator[MakeLab]:
    """Emulators on a fake kernel that also has the lab's management netdev ether1."""
    started: list[tuple[ApiServer, threading.Thread]] = []

    def make(config: str = NO_DEFAULTS, training_s: float = 0.0,
             mgmt_address: str | None = None, clock: Clock = time.time,
             **options: str) -> Lab:
        path = tmp_path / f"crs804-{len(started)}.json"
        write_initial_state(path, "crs804", CABLED, USER, PASSWORD, config=config,
                            mgmt_address=mgmt_address, **options)
        backend = FakeBackend({name: 1500 for name in CABLED} | {"ether1": 1500})
        device = Device(StateFile(path), backend, line_rate_mbit=10000, training_s=training_s,
                        clock=clock)
        device.record_settings()
        device.reconcile()
        server = ApiServer(("127.0.0.1", 0), device)
        thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
        thread.start()
        started.append((server, thread))
        return Lab(device, backend, server, path)

    yield make
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def lab(make_lab: MakeLab) -> Lab:
    """A switch reset with no defaults, whose PHYs come up at once (no training delay)."""
    return make_lab()


@pytest.fixture
def factory(make_lab: MakeLab) -> Lab:
    from fabric.lab.routeros.state import FACTORY

    return make_lab(config=FACTORY, mgmt_address=MGMT_ADDRESS)


@pytest.fixture
def raw(lab: Lab) -> Iterator[RawClient]:
    client = RawClient(lab.port)
    try:
        yield client
    finally:
        client.close()


def connect(lab: Lab) -> routeros_api.RouterOsApiPool:
    return routeros_api.RouterOsApiPool(
        "127.0.0.1", username=USER, password=PASSWORD, port=lab.port, plaintext_login=True
    )


@pytest.fixture
def api(lab: Lab) -> Iterator[routeros_api.api.RouterOsApi]:
    pool = connect(lab)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()
