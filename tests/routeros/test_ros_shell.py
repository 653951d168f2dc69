"""The SSH CLI: ``/export terse`` from state; a Netmiko ``mikrotik_routeros`` session over a pty.

sshd is replaced by a relay: the shell runs on pty A (as under sshd's ForceCommand), and
Netmiko's RouterOS driver talks to pty B through its serial transport; bytes are copied between
the two masters.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from netmiko.mikrotik.mikrotik_ssh import MikrotikRouterOsSSH

from fabric.lab.routeros.shell import answer, export_terse
from fabric.lab.routeros.state import Bridge, BridgePort, StateFile, write_initial_state


@pytest.fixture
def state_file(tmp_path: Path) -> StateFile:
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", {"qsfp56-dd-1-1": 200, "qsfp56-dd-1-5": 200}, "admin", "x")
    sf = StateFile(path)
    with sf.edit() as state:
        lane = state.lane("qsfp56-dd-1-1")
        assert lane is not None
        lane.auto_negotiation, lane.speed, lane.mtu = False, "200G-baseCR4", 9000
        state.bridges.append(Bridge(id=state.new_id(), name="bridge1"))
        state.bridge_ports.append(BridgePort(state.new_id(), "bridge1", "qsfp56-dd-1-1"))
        state.discovery.protocol = "lldp"
        state.discovery.lldp_dcbx = True
    return sf


def test_export_terse_lists_non_defaults(state_file: StateFile) -> None:
    text = export_terse(state_file.load())
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body == [
        "/interface bridge add name=bridge1",
        "/interface ethernet set [ find default-name=qsfp56-dd-1-1 ] auto-negotiation=no "
        "mtu=9000 speed=200G-baseCR4",
        "/interface bridge port add bridge=bridge1 interface=qsfp56-dd-1-1",
        "/ip neighbor discovery-settings set lldp-dcbx=yes protocol=lldp",
        "/system identity set name=crs804",
    ]
    assert "by RouterOS 7.19.4" in text.splitlines()[0]


def test_identity_print_and_bad_command(state_file: StateFile) -> None:
    state = state_file.load()
    assert answer(state, "/system identity print") == "  name: crs804"
    assert answer(state, "/frobnicate") == "bad command name frobnicate (line 1 column 2)"
    assert answer(state, "/quit") is None


def _relay(a: int, b: int, stop: threading.Event) -> None:
    while not stop.is_set():
        ready, _, _ = select.select([a, b], [], [], 0.05)
        for fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            os.write(b if fd == a else a, data)


@pytest.fixture
def pty_serial(state_file: StateFile) -> Iterator[str]:
    """Start the shell on pty A; return pty B's device path, relayed to A."""
    master_a, slave_a = os.openpty()
    master_b, slave_b = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabric.lab.routeros", "shell", "--state", str(state_file.path)],
        stdin=slave_a, stdout=slave_a, stderr=slave_a, start_new_session=True,
    )  # fmt: skip
    os.close(slave_a)
    stop = threading.Event()
    thread = threading.Thread(target=_relay, args=(master_a, master_b, stop), daemon=True)
    thread.start()
    try:
        yield os.ttyname(slave_b)
    finally:
        stop.set()
        thread.join(timeout=5)
        proc.kill()
        proc.wait(timeout=5)
        for fd in (master_a, master_b, slave_b):
            os.close(fd)


def test_netmiko_mikrotik_driver_session(pty_serial: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # netmiko only accepts ports that pyserial enumerates; a pty is a fine serial line anyway.
    monkeypatch.setattr("netmiko.base_connection.check_serial_port", lambda name: name)
    conn = MikrotikRouterOsSSH(
        device_type="mikrotik_routeros_serial",
        username="admin",
        password="x",
        serial_settings={"port": pty_serial, "baudrate": 115200},
        fast_cli=False,
    )
    try:
        assert conn.find_prompt() == "[admin@crs804] >"
        out = conn.send_command("/system identity print")
        assert out.strip() == "name: crs804"
        export = conn.send_command("/export terse")
        assert "/interface bridge port add bridge=bridge1 interface=qsfp56-dd-1-1" in export
        assert "/system identity set name=crs804" in export
        bad = conn.send_command("/frobnicate")
        assert "bad command name frobnicate" in bad
    finally:
        conn.disconnect()
