"""The host-file faults' pure parts: the keyfile NetworkManager would write, what the lab's
nmcli stand-in lists from it, the logind drop-in, and their undo records in faults.json."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from fabric.lab.faults.hostfiles import LOGIND_DROPIN, REMOVE_IPC, nm_keyfile
from fabric.lab.faults.records import Fault, NmProfileUndo, RemoveIpcUndo
from fabric.lab.host import nmcli_shim
from fabric.parsers import parse
from fabric.parsers.records import ConfSetting, NmConnection


def test_keyfile_is_listed_active_on_an_existing_twin(tmp_path: Path) -> None:
    conns, sysfs = tmp_path / "etc", tmp_path / "sys"
    conns.mkdir()
    (sysfs / "enp1s0f0np0").mkdir(parents=True)
    uuid = "4c1c3e2a-8f0e-3d5b-9a9e-1f1f2b7c6d01"
    (conns / "Wired connection 1.nmconnection").write_text(
        nm_keyfile("Wired connection 1", "enp1s0f0np0", uuid))
    (conns / "gone.nmconnection").write_text(nm_keyfile("gone", "enp9s0", uuid))
    (conns / "netplan-enP2p1s0f0np0.nmconnection").write_text(
        "[connection]\nid=netplan-enP2p1s0f0np0\ntype=ethernet\n"
        "interface-name=enP2p1s0f0np0\nautoconnect=false\n")
    lines = nmcli_shim.show((str(conns), str(tmp_path / "absent")), str(sysfs))
    records = parse("nmcli_connections", "\n".join(lines))
    assert [(r.name, r.device) for r in records if isinstance(r, NmConnection)] == [
        ("Wired connection 1", "enp1s0f0np0"), ("gone", None), ("netplan-enP2p1s0f0np0", None)]


def test_a_keyfile_without_uuid_gets_networkmanagers_uuid_from_its_path() -> None:
    path = "/run/NetworkManager/system-connections/netplan-enp1s0f0np0.nmconnection"
    assert nmcli_shim.uuid3(path) == str(uuid.uuid3(uuid.NAMESPACE_URL, path))


def test_keyfile_connection_keys_are_read_as_glib_does() -> None:
    text = ("# written by hand\n[ipv4]\nmethod=auto\n[connection]\n  ID = lab \n"
            "type=ethernet\n; a comment\nid=second\nautoconnect=false\n[ipv6]\nid=not-this\n")
    assert nmcli_shim.connection_section(text) == {
        "id": "lab", "type": "ethernet", "autoconnect": "false"}
    assert nmcli_shim.connection_section("[ipv4]\nmethod=auto\n") is None


def test_the_stand_in_loads_no_module_beyond_the_interpreters_own() -> None:
    """It runs at every facts read (eight Sparks at once behind the first bandwidth round):
    no configparser, pathlib or uuid, each a few ms of an interpreter's start."""
    run = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", nmcli_shim.__file__,
                          "connection", "reload"], capture_output=True, text=True, check=True)
    loaded = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()
              if line.startswith("import time:")]
    assert "_md5" in loaded  # the listing works: the script's own imports are shown
    assert not {"configparser", "pathlib", "uuid", "re"} & set(loaded), loaded


def test_shim_answers_what_the_toolkit_asks(capsys: object) -> None:
    assert nmcli_shim.main(["connection", "reload"]) == 0
    assert nmcli_shim.main(["device", "status"]) == 2


def test_remove_ipc_dropin_sets_yes_after_fabric() -> None:
    settings = [r for r in parse("logind_conf", f"# {LOGIND_DROPIN}\n{REMOVE_IPC}")
                if isinstance(r, ConfSetting)]
    assert [(s.key, s.value) for s in settings] == [("RemoveIPC", "yes")]
    assert Path(LOGIND_DROPIN).name > "40-fabric.conf"  # applied after push's drop-in


def test_undo_records_round_trip() -> None:
    for fault in (Fault("nm-profile", "spark01:enp1s0f0np0", "s",
                        NmProfileUndo("spark01", "/etc/x.nmconnection", None)),
                  Fault("remove-ipc", "spark02", "s", RemoveIpcUndo("spark02", LOGIND_DROPIN,
                                                                    "[Login]\n"))):
        assert Fault.from_json(fault.to_json()) == fault
