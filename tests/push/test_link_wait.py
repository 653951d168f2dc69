"""What verification waits for after a push: a twin is ready once it has carrier and, where the
push configured it, its planned MTU and addresses. On DGX OS `netplan apply` flushes every twin
netplan names and NetworkManager configures them again later (once each has carrier), so a
host that ran it waits for all its twins, not only the ones it changed."""

from __future__ import annotations

from fabric.credentials import Credentials
from fabric.devices.spark.model import FileChange, NetdevWant, SparkChanges
from fabric.devices.spark.read_twin_carrier import not_ready
from fabric.push.model import ChangeSet
from fabric.push.verify import training_links
from fabric.target import Target
from tests.push.helpers import INVENTORY, lab_intent

A, B = "enp1s0f0np0", "enP2p1s0f0np0"
WANTS = {A: NetdevWant(A, 9000, ("198.19.0.1/24",), "l", None),
         B: NetdevWant(B, 9000, ("198.19.1.1/24", "198.19.5.1/24"), "l", None)}


def test_a_twin_is_ready_with_carrier_mtu_and_every_address() -> None:
    output = (f"@@twin {A} 1 9000\n"
              f"5: {A}    inet 198.19.0.1/24 brd 198.19.0.255 scope global {A}\\"
              "       valid_lft forever preferred_lft forever\n"
              f"@@twin {B} 1 9000\n"
              f"6: {B}@cx7-p1    inet 198.19.1.1/24 scope global {B}\n")
    assert not_ready([A, B], output, WANTS) == [f"{B} (no 198.19.5.1/24 yet)"]
    assert not_ready([A, B], output, {}) == []  # carrier alone: both up


def test_no_carrier_or_the_wrong_mtu_is_not_ready() -> None:
    output = f"@@twin {A} 0 9000\n@@twin {B} 1 1500\n"
    assert not_ready([A, B], output, WANTS) == [A, f"{B} (mtu 1500, want 9000)"]
    assert not_ready([A, B], "", WANTS) == [A, B]  # nothing read back: not ready


def _changes(netplan: bool, files: tuple[FileChange, ...], commands: tuple[str, ...],
             touched: tuple[str, ...]) -> SparkChanges:
    return SparkChanges("spark01", files, commands, tuple(WANTS.values()), touched,
                        netplan=netplan)


def test_a_host_that_ran_netplan_apply_waits_for_every_twin() -> None:
    target = Target(lab_intent(), INVENTORY, Credentials())
    sysctl = FileChange("/etc/sysctl.d/60-fabric.conf", None, "x", "diff", "0644")
    netplan = FileChange("/etc/netplan/60-fabric.yaml", "a", "b", "diff", "0600")
    only_a = ChangeSet("star4", {"spark01": _changes(True, (netplan,), (), (A,))})
    assert training_links(target, only_a)[0] == {"spark01": (B, A)}
    # without netplan (the `ip` commands themselves) or without `netplan apply`: the touched
    no_netplan = ChangeSet("star4", {"spark01": _changes(False, (), (f"ip link set {A} up",),
                                                         (A,))})
    assert training_links(target, no_netplan)[0] == {"spark01": (A,)}
    sysctl_only = ChangeSet("star4", {"spark01": _changes(True, (sysctl,), (), (A,))})
    assert training_links(target, sysctl_only)[0] == {"spark01": (A,)}
