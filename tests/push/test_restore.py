"""Rollback rebuilds a netdev from its `ip -j addr` record (IPv4; IPv6 untouched) and puts the
managed files back (or removes them), all in one round trip; apply is batched the same way."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fabric.devices.spark.platform import NETPLAN_PATH, SYSCTL_PATH
from fabric.devices.spark.restore_spark_backup import (
    restore_commands,
    restore_spark_backup,
    restore_steps,
)
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.remote import shell as push_shell
from fabric.remote.shell import RemoteCommandFailed


def test_restore_commands_rebuild_mtu_addresses_and_admin_state() -> None:
    link = {"ifname": "enp1s0f0np0", "mtu": 1500, "flags": ["BROADCAST", "MULTICAST"],
            "addr_info": [
                {"family": "inet", "local": "10.0.0.1", "prefixlen": 24},
                {"family": "inet", "local": "10.0.1.1", "prefixlen": 24,
                 "broadcast": "10.0.1.255"},
                {"family": "inet6", "local": "fe80::1", "prefixlen": 64}]}
    assert restore_commands(link) == [
        "ip link set dev enp1s0f0np0 mtu 1500", "ip -4 addr flush dev enp1s0f0np0",
        "ip addr add 10.0.0.1/24 dev enp1s0f0np0",
        "ip addr add 10.0.1.1/24 broadcast 10.0.1.255 dev enp1s0f0np0",
        "ip link set dev enp1s0f0np0 down"]


def test_arp_restore_puts_recorded_sysctls_back() -> None:
    from fabric.devices.spark.restore_spark_backup import arp_restore

    assert arp_restore("cx7-p0", {"arp_ignore": "0", "arp_announce": "0"}) == [
        "sysctl -qw net.ipv4.conf.cx7-p0.arp_announce=0 net.ipv4.conf.cx7-p0.arp_ignore=0"]
    assert arp_restore("cx7-p0", {}) == []


def _backup(files: dict[str, str], modes: dict[str, str] | None = None) -> SparkSnapshot:
    link = {"ifname": "enp1s0f0np0", "mtu": 1500, "flags": ["UP"], "addr_info": []}
    return SparkSnapshot(host="spark01", netplan={}, ip_addr=[link], ip_link=[], ip_route=[],
                         has_netplan=False, has_mlnx_qos=False, ssh_server_ip=None,
                         arp={"enp1s0f0np0": {"arp_ignore": "0", "arp_announce": "0"}},
                         files=files, modes=modes or {})


class _Host:
    name = "spark01"


class _Task:
    """Just enough of a Nornir Task for the push tasks: a host and no dry run."""

    host = _Host()

    def is_dry_run(self) -> bool:
        return False


TASK: Any = _Task()


def _local_shell(sent: list[str]) -> Callable[..., str]:
    """Stand-in for `sh_ok`: records each round trip and runs it in a local bash."""

    def run(_task: object, command: str, timeout: float = 30.0) -> str:
        sent.append(command)
        return subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              check=True, timeout=timeout).stdout

    return run


def test_restore_regenerates_and_applies_netplan_before_the_ip_state() -> None:
    """The failed push's generated config must not stay live under /run (it would come back
    at the next carrier flap): restored files, then netplan, then the exact `ip` state."""
    backup = replace(_backup({}), has_netplan=True, netplan={NETPLAN_PATH: "old\n"})
    labels, _ = restore_steps(backup, ("enp1s0f0np0",), (NETPLAN_PATH, SYSCTL_PATH))
    assert labels[:3] == [f"restore {NETPLAN_PATH} (mode 600)", f"rm -f {SYSCTL_PATH}",
                          "netplan generate && netplan apply"]
    assert labels[3] == "ip link set dev enp1s0f0np0 mtu 1500"


def test_a_restore_that_did_not_take_is_named() -> None:
    from fabric.devices.spark.restore_spark_backup import restore_differences

    before = _backup({SYSCTL_PATH: "a\n"})
    link = {"ifname": "enp1s0f0np0", "mtu": 9000, "flags": ["UP"],
            "addr_info": [{"family": "inet", "local": "10.0.0.1", "prefixlen": 24}]}
    after = replace(before, ip_addr=[link], files={})
    assert restore_differences(before, after, ("enp1s0f0np0",), (SYSCTL_PATH,)) == [
        f"{SYSCTL_PATH} differs from its backup after the restore",
        "enp1s0f0np0: mtu 9000 after the restore, 1500 before the push",
        "enp1s0f0np0: IPv4 addresses ['10.0.0.1/24'] after the restore, [] before the push"]
    assert restore_differences(before, before, ("enp1s0f0np0",), (SYSCTL_PATH,)) == []


def test_restore_steps_remove_a_file_that_did_not_exist() -> None:
    labels, steps = restore_steps(_backup({}), ("enp1s0f0np0",), (SYSCTL_PATH,))
    assert labels[0] == steps[0] == f"rm -f {SYSCTL_PATH}"
    assert labels[1:] == steps[1:] == [
        "ip link set dev enp1s0f0np0 mtu 1500", "ip -4 addr flush dev enp1s0f0np0",
        "ip link set dev enp1s0f0np0 up",
        "sysctl -qw net.ipv4.conf.enp1s0f0np0.arp_announce=0 "
        "net.ipv4.conf.enp1s0f0np0.arp_ignore=0"]


def test_restore_puts_files_back_with_their_mode_in_one_round_trip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept, gone = tmp_path / "sysctl.d" / "40-fabric.conf", tmp_path / "netplan" / "40.yaml"
    gone.parent.mkdir()
    gone.write_text("written by push\n")
    sent: list[str] = []
    monkeypatch.setattr(push_shell, "sh_ok", _local_shell(sent))
    monkeypatch.setattr("fabric.devices.spark.backup_spark_config.sh_ok", _local_shell(sent))
    backup = _backup({str(kept): "net.ipv4.conf.x.arp_ignore = 0\n"}, {str(kept): "640"})
    result = restore_spark_backup(TASK, backup, (), (str(kept), str(gone)))
    assert len(sent) == 2  # one round trip restores, one reads the host back to compare
    assert kept.read_text() == "net.ipv4.conf.x.arp_ignore = 0\n"
    assert oct(kept.stat().st_mode & 0o777) == "0o640"
    assert not gone.exists()
    assert result.result == [f"restore {kept} (mode 640)", f"rm -f {gone}"]


def test_restore_runs_every_step_then_names_the_failures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    monkeypatch.setattr(push_shell, "sh_ok", _local_shell(sent))
    out = push_shell.sh_steps(TASK, ["echo one", "echo oops >&2; false", "printf 'a\\nb'"])
    assert out == [(0, "one"), (1, "oops"), (0, "a\nb")]
    stopped = push_shell.sh_steps(TASK, ["true", "exit 4", "echo never"], stop_on_error=True)
    assert stopped == [(0, ""), (4, "")]
    assert len(sent) == 2
    bad = _backup({})
    monkeypatch.setattr("fabric.devices.spark.restore_spark_backup.sh_steps",
                        lambda _t, steps, **_k: [(0, "")] + [(2, "no such dev")] * (len(steps) - 1))
    with pytest.raises(RemoteCommandFailed, match="`ip link set dev enp1s0f0np0 mtu 1500` "
                                                  "exited 2: no such dev"):
        restore_spark_backup(TASK, bad, ("enp1s0f0np0",), (str(tmp_path / "f"),))


def test_apply_writes_files_then_runtime_in_one_round_trip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.devices.spark.apply_spark_config import apply_spark_config, apply_steps
    from fabric.devices.spark.model import FileChange, SparkChanges

    target = tmp_path / "sysctl.d" / "40-fabric.conf"
    changeset = SparkChanges(host="spark01", files=(
        FileChange(NETPLAN_PATH, "same", "same", "", "600"),
        FileChange(str(target), None, "x = 1\n", "--- /dev/null\n+++ x\n", "644")),
        commands=("ip link set dev t0 up", "sysctl -qw net.ipv4.conf.t0.arp_ignore=1"),
        wants=(), touched=("t0",))
    labels, steps = apply_steps(changeset, has_netplan=True)
    assert labels == [f"write {target}", "netplan generate && netplan apply",
                      "sysctl -qw net.ipv4.conf.t0.arp_ignore=1"]
    sent: list[str] = []
    monkeypatch.setattr(push_shell, "sh_ok", _local_shell(sent))
    monkeypatch.setattr("fabric.devices.spark.apply_spark_config.apply_steps",
                        lambda p, h: ([labels[0], "check"], [steps[0], f"test -s {target}"]))
    apply_spark_config(TASK, changeset, has_netplan=True)
    assert len(sent) == 1 and target.read_text() == "x = 1\n"
    assert oct(target.stat().st_mode & 0o777) == "0o644"
