"""Field hosts (DGX OS): a sudo user, NetworkManager's netplan baseline, and other definitions
of the twins (NVIDIA's 40-cx7.yaml, NetworkManager's 90-NM-*.yaml and keyfiles)."""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from fabric.devices.spark.apply_spark_config import NETPLAN_APPLY, apply_steps
from fabric.devices.spark.diff import diff_spark
from fabric.devices.spark.platform import NETPLAN_PATH
from fabric.push.diff import diff_push
from fabric.remote.shell import as_root
from tests.push.helpers import lab_intent, recorded

BASELINE = {"/etc/netplan/01-network-manager-all.yaml":
            "network:\n  version: 2\n  renderer: NetworkManager\n"}
CX7 = ("network:\n  version: 2\n  ethernets:\n    enp1s0f0np0:\n      addresses: "
       "[192.168.100.10/24]\n    enP2p1s0f0np0:\n      addresses: [192.168.200.10/24]\n")
NM_YAML = ("network:\n  version: 2\n  nm-devices:\n    NM-1b6f:\n      renderer: "
           "NetworkManager\n      match:\n        name: enP2p1s0f0np0\n")
MIXED = ("network:\n  version: 2\n  ethernets:\n    enp1s0f0np0:\n      dhcp4: true\n"
         "    eno9:\n      dhcp4: true\n")


def fresh_spark01(**changes: object):  # type: ignore[no-untyped-def]
    facts, sparks, _ = recorded("fresh")
    return facts.sparks["spark01"], replace(sparks["spark01"], **changes)


def test_sudo_asking_for_a_password_refuses_the_host_and_names_the_fix() -> None:
    facts, snap = fresh_spark01(user="dgxadmin", privilege="password")
    changeset = diff_spark(lab_intent(), facts, snap)
    assert changeset.changes and changeset.refused
    assert "user dgxadmin cannot change spark01 (sudo asks for a password" in changeset.refused
    assert "dgxadmin ALL=(ALL) NOPASSWD: ALL" in changeset.refused


def test_passwordless_sudo_is_enough() -> None:
    facts, snap = fresh_spark01(user="dgxadmin", privilege="sudo")
    assert diff_spark(lab_intent(), facts, snap).refused is None


def test_a_refused_host_is_shown_but_not_applied_and_exits_3() -> None:
    from fabric.push.apply import PushOutcome

    facts, sparks, switch = recorded("fresh")
    sparks = {h: replace(s, user="dgxadmin", privilege="password") if h == "spark02" else s
              for h, s in sparks.items()}
    hosts = ["spark01", "spark02", "spark03", "spark04", "crs804"]
    changeset = diff_push(lab_intent(), facts, sparks, switch, hosts)
    assert list(changeset.refused) == ["spark02"]
    assert "spark02" not in changeset.hosts_with_changes()
    assert "spark01" in changeset.hosts_with_changes()
    assert PushOutcome(changeset).exit_code == 3


def test_the_host_renderer_is_reported_and_left_alone() -> None:
    facts, snap = fresh_spark01(netplan=BASELINE, has_netplan=True)
    changeset = diff_spark(lab_intent(), facts, snap)
    assert any("renderer of this host: NetworkManager (from /etc/netplan/"
               "01-network-manager-all.yaml)" in n for n in changeset.notes)
    assert "renderer" not in (changeset.file(NETPLAN_PATH).new or "").split("network:")[1]


@pytest.mark.parametrize(("path", "text", "named"), [
    ("/etc/netplan/40-cx7.yaml", CX7, "enP2p1s0f0np0, enp1s0f0np0"),
    ("/etc/netplan/90-NM-1b6f.yaml", NM_YAML, "enP2p1s0f0np0")])
def test_foreign_netplan_definitions_refuse_until_resolved(path: str, text: str,
                                                           named: str) -> None:
    facts, snap = fresh_spark01(netplan={**BASELINE, path: text}, has_netplan=True)
    changeset = diff_spark(lab_intent(), facts, snap)
    assert changeset.refused is not None
    assert f"{path} (netplan file) defines {named}" in changeset.refused
    assert "--adopt-foreign" in changeset.refused


#: Definitions that catch a twin without naming it: a name pattern, a MAC address (spark01's
#: enP2p1s0f0np0 in the recorded snapshot), a NetworkManager keyfile bound to that MAC.
GLOB = ("network:\n  version: 2\n  ethernets:\n    cx7:\n      match:\n        name: "
        "\"enp1s0f0*\"\n      addresses: [192.168.100.10/24]\n")
BY_MAC = ("network:\n  version: 2\n  ethernets:\n    right-port:\n      match:\n        "
          "macaddress: \"96:81:9D:92:CF:95\"\n      dhcp4: true\n")
KEYFILE_MAC = ("[connection]\nid=Wired 2\ntype=ethernet\n\n[ethernet]\n"
               "mac-address=96:81:9D:92:CF:95\n\n[ipv4]\nmethod=auto\n")


@pytest.mark.parametrize(("path", "text", "named"), [
    ("/etc/netplan/45-glob.yaml", GLOB, "enp1s0f0np0"),
    ("/etc/netplan/46-mac.yaml", BY_MAC, "enP2p1s0f0np0")])
def test_a_definition_matching_twins_by_pattern_or_mac_is_found_and_not_adopted(
        path: str, text: str, named: str) -> None:
    """netplan applies `match:` (a shell pattern, a MAC) too: such a file defines the twin as
    surely as one that names it. Push refuses the host; it cannot take the stanza over (it may
    catch other devices), so --adopt-foreign says to edit the file by hand."""
    facts, snap = fresh_spark01(netplan={**BASELINE, path: text}, has_netplan=True)
    changeset = diff_spark(lab_intent(), facts, snap)
    assert changeset.refused is not None and f"{path} (netplan file) defines {named}" in (
        changeset.refused)
    adopted = diff_spark(lab_intent(), facts, snap, adopt=True)
    assert adopted.refused is not None and "by a name pattern or MAC address" in adopted.refused
    assert path in adopted.refused and "by hand" in adopted.refused


def test_a_networkmanager_keyfile_bound_to_a_twins_mac_is_found() -> None:
    path = "/etc/NetworkManager/system-connections/Wired 2.nmconnection"
    facts, snap = fresh_spark01(netplan=BASELINE, has_netplan=True,
                                nm_keyfiles={path: KEYFILE_MAC})
    changeset = diff_spark(lab_intent(), facts, snap)
    assert changeset.refused is not None
    assert f"{path} (NetworkManager connection) defines enP2p1s0f0np0" in changeset.refused


def test_adopting_removes_a_twins_only_file_with_a_diff() -> None:
    facts, snap = fresh_spark01(netplan={**BASELINE, "/etc/netplan/40-cx7.yaml": CX7},
                                has_netplan=True, modes={"/etc/netplan/40-cx7.yaml": "600"})
    changeset = diff_spark(lab_intent(), facts, snap, adopt=True)
    assert changeset.refused is None
    gone = changeset.file("/etc/netplan/40-cx7.yaml")
    assert gone.new is None and "+++ /dev/null" in gone.diff and "-      addresses" in gone.diff
    labels, steps = apply_steps(changeset, has_netplan=True)
    assert "remove /etc/netplan/40-cx7.yaml" in labels
    assert "rm -f /etc/netplan/40-cx7.yaml" in steps
    assert labels.index("remove /etc/netplan/40-cx7.yaml") < labels.index(NETPLAN_APPLY)


def test_adopting_a_mixed_file_keeps_its_other_devices() -> None:
    facts, snap = fresh_spark01(netplan={**BASELINE, "/etc/netplan/50-site.yaml": MIXED},
                                has_netplan=True)
    changeset = diff_spark(lab_intent(), facts, snap, adopt=True)
    new = changeset.file("/etc/netplan/50-site.yaml").new or ""
    assert "eno9" in new and "enp1s0f0np0" not in new.split("\n", 1)[1]


def test_networkmanager_keyfile_of_a_twin_is_listed_and_adopted() -> None:
    path = "/etc/NetworkManager/system-connections/cx7-a.nmconnection"
    keyfile = "[connection]\nid=cx7-a\ntype=ethernet\ninterface-name=enp1s0f0np0\n"
    facts, snap = fresh_spark01(nm_keyfiles={path: keyfile}, has_netplan=True)
    refused = diff_spark(lab_intent(), facts, snap).refused or ""
    assert f"{path} (NetworkManager connection) defines enp1s0f0np0" in refused
    changeset = diff_spark(lab_intent(), facts, snap, adopt=True)
    labels, _ = apply_steps(changeset, has_netplan=True)
    assert f"remove {path}" in labels and "nmcli connection reload" in labels


def test_files_push_cannot_take_over_stay_refused() -> None:
    facts, snap = fresh_spark01(netplan_ro={"/run/netplan/40-cx7.yaml": CX7}, has_netplan=True)
    refused = diff_spark(lab_intent(), facts, snap, adopt=True).refused or ""
    assert "cannot take over /run/netplan/40-cx7.yaml" in refused


def test_a_same_named_run_file_hides_the_etc_one() -> None:
    from fabric.devices.spark.netplan import host_renderer

    files = {"/etc/netplan/01-nm.yaml": "network: {renderer: NetworkManager}",
             "/run/netplan/01-nm.yaml": "network: {renderer: networkd}"}
    assert host_renderer(files, NETPLAN_PATH) == ("networkd", "/run/netplan/01-nm.yaml")


def test_as_root_runs_directly_for_root_and_through_sudo_otherwise() -> None:
    script = as_root("echo \"it's $(id -u)\"")
    assert "sudo -n sh -c" in script
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout == "it's 0\n"


def test_on_a_netplan_host_the_dry_run_shows_netplan_apply_and_its_effect() -> None:
    from fabric.devices.spark.apply_spark_config import change_text

    facts, snap = fresh_spark01(netplan=BASELINE, has_netplan=True)
    text = change_text(diff_spark(lab_intent(), facts, snap))
    assert "$ netplan generate && netplan apply   # which makes these changes:" in text
    assert "#   ip link set dev enp1s0f0np0 mtu 9000" in text
    assert "\n$ ip " not in text
    bare = change_text(diff_spark(lab_intent(), facts, replace(snap, has_netplan=False)))
    assert "$ ip link set dev enp1s0f0np0 mtu 9000" in bare and "netplan apply" not in bare
