"""Fixtures: the RouterOS emulator in-process on 127.0.0.1 (fake kernel) and a local target."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fabric.credentials import Credentials
from fabric.intent.build import load_intent
from fabric.lab.routeros.backend import FakeBackend, Neighbor
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.server import ApiServer
from fabric.lab.routeros.state import StateFile, write_initial_state
from fabric.target import Target

USER, PASSWORD = "admin", "pw=s3cret-Zq"
LANES = {f"qsfp56-dd-{n}-1": 200 for n in range(1, 5)}
SPARKS = ["spark01", "spark02", "spark03", "spark04"]


@dataclass
class Emulator:
    backend: FakeBackend
    server: ApiServer

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


#: How long a switch read here polls for LLDP neighbours (2 s in the field): the emulator's
#: fake kernel hears one neighbour and never any on the other cabled lanes, so every read of
#: the switch would wait the whole bound for nothing.
EMULATOR_LLDP_WAIT_S = 0.5


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    monkeypatch.setattr("fabric.devices.crs804.facts.SWITCH_LLDP_WAIT_S", EMULATOR_LLDP_WAIT_S)
    state = tmp_path / "crs804.json"
    write_initial_state(state, "crs804", LANES, USER, PASSWORD)
    backend = FakeBackend(dict.fromkeys(LANES, 1500))
    backend.neighbor_list = [
        Neighbor("qsfp56-dd-1-1", identity="spark01", interface_name="enp1s0f0np0",
                 system_description="Ubuntu 24.04 Linux 6.11.0-1016-nvidia")]
    device = Device(StateFile(state), backend, line_rate_mbit=10000)
    device.reconcile()
    server = ApiServer(("127.0.0.1", 0), device)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield Emulator(backend, server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def write_inventory(path: Path, spark_port: int = 1) -> Path:
    """Every star4 host on 127.0.0.1; the Sparks on `spark_port` (1: refused)."""
    repo_inv = Path(__file__).resolve().parents[2] / "inventory"
    path.mkdir(parents=True, exist_ok=True)
    hosts = {h: {"hostname": "127.0.0.1", "port": spark_port, "groups": ["sparks"],
                 "data": {"node_id": n, "status": "in-service"}}
             for n, h in enumerate(SPARKS, start=1)}
    hosts["crs804"] = {"hostname": "127.0.0.1", "groups": ["switches"],
                       "data": {"status": "in-service"}}
    (path / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    for name in ("groups.yaml", "defaults.yaml"):
        (path / name).write_text((repo_inv / name).read_text())
    return path


@pytest.fixture
def target(tmp_path: Path, emulator: Emulator) -> Target:
    inv = write_inventory(tmp_path / "inv")
    creds = Credentials(ssh_user="root", known_hosts=tmp_path / "known_hosts",
                        routeros_user=USER, routeros_password=PASSWORD,
                        routeros_port=emulator.port)
    return Target(load_intent("star4", None), inv, creds)
