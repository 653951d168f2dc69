"""`fabric push` end to end: on a fresh star4 the whole cycle (dry run, a verification failure
that rolls back exactly, apply, validate, idempotence, `push rollback RUN_ID`, refusals); on a
fresh ring4 and star8 (spark05-08 behind breakouts) dry run -> apply (one SSH login per Spark)
-> validate -> 0 changes. The persisted ARP policy (/etc/sysctl.d/40-fabric.conf) lands in each
host's private /etc and a rollback removes it again."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.devices.spark.platform import SYSCTL_PATH
from fabric.lab.host.hostenv import host_path
from fabric.lab.lifecycle import builder
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import Labs, fabric, in_host

pytestmark = pytest.mark.lab

LAB = "t-push-star4"
SPARKS = ("spark01", "spark02", "spark03", "spark04")


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Iterator[LabInfo]:
    """A fresh star4 of this module's own; its lanes train for the builder's default time, so
    the push visibly waits for them."""
    with labs.private("star4", LAB, switch_prepared=True,
                      link_training_s=builder.DEFAULT_LINK_TRAINING_S) as info:
        yield info


@pytest.fixture(scope="module")
def fresh(lab: LabInfo) -> dict[str, Any]:
    """The lab as built, before any push: the state every rollback must give back.

    Taken once IPv6 duplicate address detection is over (no `tentative` link-local address),
    so the kernel's own settling is not mistaken for a change.
    """
    return settled(lab)


def settled(lab: LabInfo) -> dict[str, Any]:
    """A snapshot once no IPv6 address is `tentative` (DAD after a link came up)."""
    deadline = time.monotonic() + 15
    while True:
        snap = snapshot(lab)
        done = not any(a.get("tentative") for h in SPARKS for link in snap[h]
                       for a in link.get("addr_info", []))
        if done or time.monotonic() > deadline:
            return snap
        time.sleep(0.3)


def ns(lab: LabInfo, host: str, *cmd: str) -> str:
    return subprocess.run(["ip", "netns", "exec", lab.namespaces[host], *cmd], check=True,
                          capture_output=True, text=True).stdout


def snapshot(lab: LabInfo) -> dict[str, Any]:
    """`ip -j -d addr` of every Spark and the emulator's configuration (ids aside)."""
    out: dict[str, Any] = {h: json.loads(ns(lab, h, "ip", "-j", "-d", "addr")) for h in SPARKS}
    out |= {f"{h}:netplan": netplan_view(lab, h) for h in SPARKS}
    state = json.loads((lab.dir / "switch-state.json").read_text())
    state.pop("next_id")
    for lane in state["lanes"]:
        lane.pop("training_until", None)  # when the PHY last trained: not configuration
    out["crs804"] = state
    return out


def netplan_view(lab: LabInfo, host: str) -> dict[str, Any]:
    """What netplan makes of the host (`netplan get`) and what it generated under /run."""
    holder = lab.hosts[host].pids["holder"]
    live = sorted(str(p.relative_to(host_path(holder, "/run")))
                  for d in ("systemd/network", "NetworkManager/system-connections")
                  for p in host_path(holder, f"/run/{d}").glob("*"))
    return {"get": in_host(lab, host, "netplan", "get"), "run": live}


def networkmanager_owns_the_host(lab: LabInfo, host: str) -> bool:
    """netplan's output keeps NetworkManager the renderer of every device (enP7s7 too): its
    globally-managed override is there and networkd was given no device."""
    holder = lab.hosts[host].pids["holder"]
    override = host_path(holder, "/run/NetworkManager/conf.d/10-globally-managed-devices.conf")
    return override.exists() and not list(host_path(holder, "/run/systemd/network")
                                          .glob("*.network"))


def twin(lab: LabInfo, host: str, netdev: str) -> dict[str, Any]:
    data: list[dict[str, Any]] = json.loads(ns(lab, host, "ip", "-j", "addr", "show", netdev))
    return data[0]


def sysctl_file(lab: LabInfo, host: str) -> str | None:
    """The host's /etc/sysctl.d/40-fabric.conf as the host sees it (None: there is none)."""
    out = in_host(lab, host, "sh", "-c", f"cat {SYSCTL_PATH} 2>/dev/null || echo @@ABSENT")
    return None if out == "@@ABSENT\n" else out


def run_id(stdout: str) -> str:
    m = re.search(r"^RUN_ID (\S+)$", stdout, re.MULTILINE)
    assert m, stdout
    return m.group(1)


def test_dry_run_lists_every_host_and_change(lab: LabInfo, state_dir: Path,
                                            fresh: dict[str, Any]) -> None:
    r = fabric("push", "--lab", LAB, state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    for host in SPARKS:
        assert f"{host}: 10 changes" in r.stderr
    # (qos: lossy leaves LLDP DCBX alone: it is on only in the lossless profile)
    assert "crs804 (RouterOS 7.19.4 (stable)): 20 changes" in r.stderr
    assert "$ netplan generate && netplan apply   # which makes these changes:" in r.stderr
    assert "#   ip addr add 198.19.0.1/24 dev enp1s0f0np0" in r.stderr
    assert "+++ /etc/netplan/40-fabric.yaml (intent)" in r.stderr
    assert f"+++ {SYSCTL_PATH} (intent)" in r.stderr
    assert "+net.ipv4.conf.enp1s0f0np0.arp_ignore = 1" in r.stderr
    assert "speed: 400G-baseCR8 -> 200G-baseCR4, auto-negotiation: yes -> no" in r.stderr
    assert "dry run: 60 changes on 5 hosts" in r.stderr
    assert snapshot(lab) == fresh, "a dry run changed something"
    assert all(sysctl_file(lab, h) is None for h in SPARKS)


def test_failed_verification_rolls_back_exactly(lab: LabInfo, state_dir: Path,
                                                fresh: dict[str, Any]) -> None:
    ns(lab, "spark02", "ip", "link", "set", "cx7-p0", "down")  # spark02's cable goes dark
    try:
        before = snapshot(lab)
        r = fabric("push", "--lab", LAB, "--apply", "--link-wait", "6", state_dir=state_dir)
        assert r.returncode == 1, r.stderr
        assert "links still down after" in r.stderr and "spark02:enp1s0f0np0" in r.stderr
        assert "verification failed on spark02: enp1s0f0np0: link not up" in r.stderr
        assert "rolled back: crs804, spark01, spark02, spark03, spark04" in r.stderr
        assert snapshot(lab) == before
        assert all(sysctl_file(lab, h) is None for h in SPARKS), "rollback left sysctl.d"
        manifest = json.loads((state_dir / "runs" / run_id(r.stdout) / "manifest.json")
                              .read_text())
        assert manifest["status"] == "rolled-back"
    finally:
        ns(lab, "spark02", "ip", "link", "set", "cx7-p0", "up")
    assert settled(lab) == fresh


def test_apply_configures_hosts_and_switch(lab: LabInfo, state_dir: Path) -> None:
    r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert "applied 60 changes" in r.stderr
    # the lanes' speed changed, so they trained for seconds; verification waited, no rollback
    assert "waiting for links to train" in r.stderr and "every link trained after" in r.stderr
    assert lab.ssh_user != "root"
    for n, host in enumerate(SPARKS, start=1):
        assert networkmanager_owns_the_host(lab, host)
        a = twin(lab, host, "enp1s0f0np0")
        b = twin(lab, host, "enP2p1s0f0np0")
        assert (a["mtu"], b["mtu"]) == (9000, 9000)
        v4 = [f"{x['local']}/{x['prefixlen']}" for t in (a, b) for x in t["addr_info"]
              if x["family"] == "inet"]
        assert v4 == [f"198.19.0.{n}/24", f"198.19.1.{n}/24"]
        netplan = host_path(lab.hosts[host].pids["holder"], "/etc/netplan/40-fabric.yaml")
        assert f"- 198.19.0.{n}/24" in netplan.read_text()
        assert twin(lab, host, "enP7s7")["mtu"] == 1500  # management untouched
        persisted = sysctl_file(lab, host)  # in the host's private (overlay) /etc
        assert persisted is not None and "net.ipv4.conf.enP2p1s0f0np0.arp_announce = 2" \
            in persisted and "enP7s7." not in persisted
        assert in_host(lab, host, "stat", "-c", "%a", SYSCTL_PATH).strip() == "644"
    assert not Path(SYSCTL_PATH).exists(), "push wrote the machine's own /etc"
    state = json.loads((lab.dir / "switch-state.json").read_text())
    lanes = {x["name"]: x for x in state["lanes"]}
    for n in range(1, 5):
        lane = lanes[f"qsfp56-dd-{n}-1"]
        assert (lane["speed"], lane["auto_negotiation"], lane["fec_mode"], lane["mtu"],
                lane["l2mtu"]) == ("200G-baseCR4", False, "fec91", 9000, 9216)
    assert lanes["qsfp56-dd-1-2"]["speed"] == "400G-baseCR8"  # unused lanes left alone
    assert [b["name"] for b in state["bridges"]] == ["bridge"]  # the factory one, reused
    ports = {p["interface"]: p for p in state["bridge_ports"]}
    assert all(ports[f"qsfp56-dd-{n}-1"]["hw"] for n in range(1, 5))
    assert "ether1" not in ports  # management stays outside the fabric bridge
    backup = state_dir / "runs" / run_id(r.stdout)
    assert (backup / "spark01" / "ip-addr.json").exists()
    assert (backup / "crs804" / "routeros.json").exists()
    assert (backup / "crs804" / "export.rsc").exists() or (
        backup / "crs804" / "export-error.txt").exists()


def test_pings_and_validate_pass(lab: LabInfo, state_dir: Path) -> None:
    out = ns(lab, "spark01", "ping", "-c", "2", "-W", "2", "-M", "do", "-s", "8972",
             "-I", "enp1s0f0np0", "198.19.0.3")
    assert " 0% packet loss" in out
    r = fabric("validate", "--lab", LAB, state_dir=state_dir)
    assert r.returncode == 0, r.stdout + r.stderr


def test_second_apply_changes_nothing(lab: LabInfo, state_dir: Path) -> None:
    before = snapshot(lab)
    r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert "0 changes" in r.stderr and "RUN_ID" not in r.stdout
    assert snapshot(lab) == before


def test_rollback_run_id_restores_the_fresh_lab(lab: LabInfo, state_dir: Path,
                                                fresh: dict[str, Any]) -> None:
    runs = sorted((state_dir / "runs").iterdir())
    applied = [p for p in runs if json.loads((p / "manifest.json").read_text())["status"]
               == "applied"]
    assert len(applied) == 1
    r = fabric("push", "rollback", applied[0].name, "--lab", LAB, state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert settled(lab) == fresh
    assert all(sysctl_file(lab, h) is None for h in SPARKS), "rollback left sysctl.d"
    assert "dry run: 60 changes" in fabric("push", "--lab", LAB, state_dir=state_dir).stderr


def test_unknown_host_is_refused(state_dir: Path, lab: LabInfo) -> None:
    r = fabric("push", "--lab", LAB, "--hosts", "spark01,spark09", state_dir=state_dir)
    assert r.returncode == 2
    assert "not in topology star4: spark09" in r.stderr
    assert "Traceback" not in r.stderr


def test_locked_host_is_refused(state_dir: Path, lab: LabInfo) -> None:
    from fabric.cli.common import resolve_target
    from fabric.push.apply import lock_keys
    from fabric.push.lock import host_locks

    keys = lock_keys(resolve_target(LAB, None, None), ["spark03"])
    with host_locks(state_dir / "locks", "held-by-test", keys):
        r = fabric("push", "--lab", LAB, "--apply", "--hosts", "spark03", state_dir=state_dir)
    assert r.returncode == 3
    assert "spark03 is locked by push run held-by-test" in r.stderr


CYCLE_CHECKS = "link,mtu,addr,route,cabling"


@pytest.fixture(scope="module", params=["ring4", "star8"])
def cycle_lab(request: pytest.FixtureRequest, labs: Labs) -> Iterator[LabInfo]:
    """One fresh lab per topology for this module (t-push-ring4, t-push-star8)."""
    with labs.private(request.param, f"t-push-{request.param}", switch_prepared=True) as info:
        yield info


def logins(lab: LabInfo) -> dict[str, int]:
    """SSH logins so far per Spark, from the lab's sshd logs."""
    logs = Path("/run/fabric/labs") / lab.name / "logs"
    return {h: (logs / f"{h}.sshd.log").read_text().count("Accepted publickey")
            for h in sorted(lab.hosts) if h.startswith("spark")}


def test_fresh_lab_cycle(cycle_lab: LabInfo, state_dir: Path) -> None:
    """Dry run shows changes and changes nothing; --apply configures and verifies over ONE SSH
    session per Spark (facts, snapshot, apply and verify share it); validate passes; a second
    --apply changes nothing."""
    lab = cycle_lab.name
    dry = fabric("push", "--lab", lab, state_dir=state_dir)
    assert dry.returncode == 0, dry.stderr
    m = re.search(r"dry run: (\d+) changes on (\d+) hosts", dry.stderr)
    assert m and int(m.group(1)) > 0, dry.stderr
    assert "$ sysctl -qw net.ipv4.conf.enp1s0f0np0.arp_ignore=1" in dry.stderr
    assert f"+++ {SYSCTL_PATH} (intent)" in dry.stderr
    if cycle_lab.switch is not None:  # star8: each breakout group bounces both of its Sparks
        assert ("changing qsfp56-dd-1-1, qsfp56-dd-1-5 restarts every lane of qsfp56-dd-1 "
                "(mode 2x200G); it bounces: spark01 (qsfp56-dd-1-1), spark02 (qsfp56-dd-1-5)"
                ) in dry.stderr
        for port in range(1, 5):  # one warning per port group, not one per lane
            assert dry.stderr.count(f"restarts every lane of qsfp56-dd-{port} ") == 1
    before = logins(cycle_lab)
    r = fabric("push", "--lab", lab, "--apply", state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert f"applied {m.group(1)} changes" in r.stderr
    after = logins(cycle_lab)
    assert {h: after[h] - before[h] for h in after} == {h: 1 for h in after}
    assert all(sysctl_file(cycle_lab, h) is not None for h in after)
    v = fabric("validate", "--lab", lab, "--only", CYCLE_CHECKS, state_dir=state_dir)
    assert v.returncode == 0, v.stdout + v.stderr
    again = fabric("push", "--lab", lab, "--apply", state_dir=state_dir)
    assert again.returncode == 0, again.stderr
    assert "0 changes" in again.stderr and "RUN_ID" not in again.stdout
