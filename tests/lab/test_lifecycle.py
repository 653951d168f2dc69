"""`fabric lab up/down`: what a lab is made of, and that `down` leaves nothing behind."""

from __future__ import annotations

import ipaddress
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.lab import names, ns
from fabric.lab.host import lldp
from fabric.lab.lifecycle import builder, registry
from tests.conftest import run_cli

pytestmark = pytest.mark.lab


def _netns_list() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def _root_links() -> set[str]:
    out = subprocess.run(["ip", "-j", "link"], capture_output=True, text=True, check=True)
    return {link["ifname"] for link in json.loads(out.stdout)}


def _lab_processes(lab: str) -> list[str]:
    needle = str(registry.lab_dir(lab)).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if needle in cmdline or f"{lab}-".encode() in cmdline.split(b"\0")[3:4]:
                found.append(cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found


def assert_nothing_left(lab: str, bridge: str, root_veths: list[str]) -> None:
    assert not [n for n in _netns_list() if n.startswith(f"{lab}-")], "namespaces left"
    assert not _lab_processes(lab), "processes left"
    mounts = Path("/proc/self/mountinfo").read_text()
    assert f"/{lab}-" not in mounts and str(registry.lab_dir(lab)) not in mounts, "mounts left"
    links = _root_links()
    assert bridge not in links, "bridge left"
    assert not links & set(root_veths), "root-namespace veths left"
    assert not registry.lab_dir(lab).exists(), "state directory left"


@pytest.mark.parametrize("topology", ["ring4", "star8"])
def test_up_builds_the_lab_and_down_leaves_nothing(topology: str) -> None:
    lab = f"t-life-{topology}"
    builder.down(lab)
    info = builder.up(topology, lab)
    try:
        _check_built(info)
    finally:
        bridge, veths = info.bridge, [h.root_veth for h in info.hosts.values()]
        assert builder.down(lab) is True
    assert_nothing_left(lab, bridge, veths)
    assert builder.down(lab) is False  # idempotent


@pytest.mark.parametrize("topology", ["ring4", "star4"])
def test_up_straight_after_down_of_the_same_name(topology: str) -> None:
    """Three up/down cycles of one name: each `up` succeeds, each `down` leaves nothing."""
    lab = f"t-labfix-loop-{topology}"
    builder.down(lab)
    for _ in range(3):
        info = builder.up(topology, lab)
        try:
            assert info.state == "up"
            assert all(ns.alive(pid) for h in info.hosts.values() for pid in h.pids.values())
        finally:
            bridge, veths = info.bridge, [h.root_veth for h in info.hosts.values()]
            assert builder.down(lab) is True
        assert_nothing_left(lab, bridge, veths)


def _has_key(node: object, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(_has_key(v, key) for v in node.values())
    if isinstance(node, (list, tuple, Iterator)):
        return any(_has_key(v, key) for v in node)
    return False


def _check_built(info: registry.LabInfo) -> None:
    lab = info.name
    intent = load_intent(info.topology_path, info.inventory_dir)
    hosts = set(intent.graph.nodes)
    assert set(info.namespaces.values()) == {f"{lab}-{h}" for h in hosts}
    assert set(info.namespaces.values()) <= set(_netns_list())
    assert registry.list_labs().count(lab) == 1
    # addresses only from 198.18.0.0/15; the topology copy is the lab profile
    bench = ipaddress.IPv4Network("198.18.0.0/15")
    assert all(ipaddress.IPv4Address(ip) in bench for ip in info.mgmt.values())
    assert intent.profile.name == "veth"
    assert all(r.subnet.subnet_of(bench) for link in intent.links for r in link.rails)
    # inventory: hostname = management address, no secrets; secrets.json is private
    inv = yaml.safe_load((info.inventory_dir / "hosts.yaml").read_text())
    assert {h: v["hostname"] for h, v in inv.items()} == info.mgmt
    inv_text = "".join(p.read_text() for p in info.inventory_dir.iterdir())
    assert info.routeros_password not in inv_text
    assert not _has_key(yaml.safe_load_all(inv_text), "password")
    assert stat.S_IMODE((info.dir / "secrets.json").stat().st_mode) == 0o600
    assert info.routeros_password and info.routeros_password not in (
        info.dir / "lab.json").read_text()
    known = info.known_hosts.read_text()
    assert all(ip in known for ip in info.mgmt.values())
    assert info.bridge in _root_links() and len(info.bridge) <= 15


def test_up_on_an_existing_lab_is_refused_with_the_hint(
        ring4: registry.LabInfo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["lab", "up", "ring4", "--name", ring4.name], capsys)
    assert code == 2
    assert f"fabric lab down --name {ring4.name}" in err
    assert "Traceback" not in err


def test_down_of_a_missing_lab_says_so_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["lab", "down", "--name", "t-never-built"], capsys)
    assert code == 0
    assert "no lab named t-never-built" in err


def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["lab", "up", "ring4", "--name", "Bad_Name"], capsys)[0] == 2
    assert run_cli(["lab", "up", "no-such-topology", "--name", "t-x"], capsys)[0] == 2
    with pytest.raises(InputError, match="no lab named t-nope"):
        registry.load_lab("t-nope")


def test_a_failed_up_cleans_up_after_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    lab = "t-fail"
    builder.down(lab)

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("lldpd refused to start (injected)")

    monkeypatch.setattr(lldp, "start", broken)
    with pytest.raises(RuntimeError, match="injected"):
        builder.up("star4", lab)
    slot_bridge = names.bridge(lab)
    assert_nothing_left(lab, slot_bridge, [])
    assert not [link for link in _root_links() if link.startswith("fl") and "-crs804" in link
                and link not in _other_labs_veths()]


def _other_labs_veths() -> set[str]:
    return {h.root_veth for n in registry.list_labs() for h in registry.load_lab(n).hosts.values()}


def test_status_lists_labs_hosts_and_daemons(
        star4: registry.LabInfo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["lab", "status"], capsys)
    assert code == 0
    assert star4.name in err
    for host, ip in star4.mgmt.items():
        assert host in err and ip in err
    assert "sshd up" in err and "api up" in err
