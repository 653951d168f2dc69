"""The SSH CLI: ``/export terse`` from state, the console language (print, set, find, ``;``),
and a Netmiko ``mikrotik_routeros`` session over a pty.

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

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.cli import Cli, split_commands, tokens
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.shell import export_terse
from fabric.lab.routeros.state import (
    FACTORY,
    Bridge,
    BridgePort,
    StateFile,
    write_initial_state,
)

LANES = {"qsfp56-dd-1-1": 200, "qsfp56-dd-1-5": 200}


@pytest.fixture
def state_file(tmp_path: Path) -> StateFile:
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", LANES, "admin", "x")
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


@pytest.fixture
def cli(state_file: StateFile) -> Cli:
    return Cli(Device(state_file, FakeBackend(dict.fromkeys(LANES, 1500)), training_s=0.0))


def test_identity_print_and_bad_command(cli: Cli) -> None:
    assert cli.execute("/system identity print") == "  name: crs804"
    assert cli.execute("/frobnicate") == "bad command name frobnicate (line 1 column 2)"
    assert cli.execute("/interface frob print") == "bad command name frob (line 1 column 12)"
    assert cli.execute("/quit") is None


def test_lexing_quotes_brackets_and_semicolons() -> None:
    assert split_commands('/a b; /c d="x;y" [ find name=";" ];') == [
        "/a b", '/c d="x;y" [ find name=";" ]']
    assert tokens('set [ find default-name=ether1 ] comment="a \\"b\\" c" mtu=9000') == [
        "set", "[ find default-name=ether1 ]", 'comment=a "b" c', "mtu=9000"]


def test_set_by_find_reaches_state_and_kernel(cli: Cli, state_file: StateFile) -> None:
    line = "/interface ethernet set [ find default-name=qsfp56-dd-1-5 ] mtu=9100 comment=\"x y\""
    assert cli.execute(line) == ""
    lane = state_file.load().lane("qsfp56-dd-1-5")
    assert lane is not None and (lane.mtu, lane.comment) == (9100, "x y")
    backend = cli.device.backend
    assert isinstance(backend, FakeBackend)
    assert backend.links()["qsfp56-dd-1-5"].mtu == 9100
    assert cli.execute("/interface/ethernet/set qsfp56-dd-1-5 mtu=70000") == (
        "value of mtu out of range (64..9570)")
    assert cli.execute("/interface ethernet set nope mtu=9000") == "no such item"


def test_print_table_where_and_count(cli: Cli) -> None:
    out = cli.execute("/interface bridge port print")
    assert out is not None
    lines = out.splitlines()
    assert lines[0] == "Flags: X - DISABLED; I - INACTIVE; H - HW-OFFLOAD"
    assert lines[1].startswith("Columns: INTERFACE, BRIDGE, HW")
    assert lines[3].split() == ["0", "H", "qsfp56-dd-1-1", "bridge1", "yes", "1", "0x80", "10",
                                "none"]
    assert cli.execute("/interface print count-only where running") == "2"
    assert cli.execute("/interface print count-only where !running type=ether") == "31"
    terse = cli.execute("/interface ethernet print terse where name=qsfp56-dd-1-1")
    assert terse is not None and terse.startswith(" 0 R ")
    assert "auto-negotiation=no" in terse and "speed=200G-baseCR4" in terse
    mon = cli.execute("/interface ethernet monitor qsfp56-dd-1-1 once")
    assert mon is not None and "status: link-ok" in mon and "rate: 200Gbps" in mon


def test_first_failing_command_stops_the_line(cli: Cli, state_file: StateFile) -> None:
    out = cli.execute("/system identity set name=a; /interface ethernet set nope mtu=1; "
                      "/system identity set name=b")
    assert out == "no such item"
    assert state_file.load().identity == "a"
    assert cli.execute('/system identity set name="unterminated') is not None
    assert state_file.load().identity == "a"


def test_admin_steps_as_one_line_make_the_factory_switch_prepared(tmp_path: Path) -> None:
    path = tmp_path / "factory.json"
    write_initial_state(path, "crs804", LANES, "admin", "x", config=FACTORY,
                        mgmt_address="198.18.3.10/24")
    cli = Cli(Device(StateFile(path), FakeBackend(dict.fromkeys(LANES, 1500)), training_s=0.0))
    before = cli.execute("/ip address print")
    assert before is not None and before.splitlines()[-1].split() == [
        "0", "198.18.3.10/24", "198.18.3.0", "bridge"]
    assert cli.execute("/interface bridge port remove [find interface=ether1]; "
                       "/ip address set [find interface=bridge] interface=ether1") == ""
    after = cli.execute("/ip address print")
    assert after is not None and after.splitlines()[-2] == ";;; defconf"
    assert after.splitlines()[-1].split() == ["0", "198.18.3.10/24", "198.18.3.0", "ether1"]
    assert cli.execute("/interface bridge port print count-only where interface=ether1") == "0"
    assert cli.execute("/interface bridge port print count-only") == "32"


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
        out = str(conn.send_command("/system identity print"))
        assert out.strip() == "name: crs804"
        export = conn.send_command("/export terse")
        assert "/interface bridge port add bridge=bridge1 interface=qsfp56-dd-1-1" in export
        assert "/system identity set name=crs804" in export
        bad = conn.send_command("/frobnicate")
        assert "bad command name frobnicate" in bad
        conn.send_command("/ip address add address=198.18.3.10/24 interface=ether1")
        addresses = str(conn.send_command("/ip address print"))
        assert addresses.splitlines()[-1].split() == ["0", "198.18.3.10/24", "198.18.3.0",
                                                      "ether1"]
    finally:
        conn.disconnect()


def test_numbers_refer_to_the_last_print(cli: Cli, state_file: StateFile) -> None:
    out = cli.execute("/interface ethernet print where name=qsfp56-dd-1-5")
    assert out is not None and out.splitlines()[-1].split()[:3] == ["0", "R", "qsfp56-dd-1-5"]
    assert cli.execute("/interface ethernet set 0 comment=picked") == ""
    lane = state_file.load().lane("qsfp56-dd-1-5")
    assert lane is not None and lane.comment == "picked"
    assert cli.execute("/interface ethernet set 1 comment=x") == "no such item"
