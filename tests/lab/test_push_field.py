"""`fabric push` against labs as strict as the field: a factory-configured CRS804 (its
management address on the fabric bridge), other definitions of the twins (NVIDIA's
40-cx7.yaml), and a sudo that asks for a password. Each refusal changes nothing, names the
fix, and the push goes through once the fix is made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.host.hostenv import host_path
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import Labs, fabric, in_host

pytestmark = pytest.mark.lab

FACTORY = "t-field-star4"
CX7 = "/etc/netplan/40-cx7.yaml"
#: NVIDIA's playbook file for spark03's twins, with the playbook's own addresses
CX7_TEXT = ("network:\n  version: 2\n  ethernets:\n    enp1s0f0np0:\n      addresses: "
            "[192.168.100.13/24]\n    enP2p1s0f0np0:\n      addresses: [192.168.200.13/24]\n")


@pytest.fixture(scope="module")
def factory_lab(labs: Labs) -> Iterator[LabInfo]:
    with labs.private("star4", FACTORY, link_training_s=1.0) as info:
        yield info


def switch_state(lab: LabInfo) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((lab.dir / "switch-state.json").read_text())
    state.pop("next_id", None)
    return state


def spark_state(lab: LabInfo, host: str) -> dict[str, Any]:
    """`ip -j -4 addr` of a Spark (IPv6 link-local DAD settles on its own) and its
    /etc/netplan as the host sees them."""
    netplan = host_path(lab.hosts[host].pids["holder"], "/etc/netplan")
    return {"ip": json.loads(in_host(lab, host, "ip", "-j", "-4", "addr")),
            "netplan": {p.name: p.read_text() for p in sorted(netplan.glob("*.yaml"))}}


def prepare_switch(lab: LabInfo) -> None:
    """What the refusal tells the admin to do, over the RouterOS API: take ether1 out of the
    fabric bridge and move the management address onto it."""
    import routeros_api

    pool = routeros_api.RouterOsApiPool(lab.mgmt["crs804"], username=lab.routeros_user,
                                        password=lab.routeros_password, port=lab.api_port,
                                        plaintext_login=True)
    try:
        api = pool.get_api()
        ports = api.get_resource("/interface/bridge/port")
        for row in ports.get(interface="ether1"):
            ports.remove(id=row["id"])
        addresses = api.get_resource("/ip/address")
        for row in addresses.get(interface="bridge"):
            addresses.set(id=row["id"], interface="ether1")
    finally:
        pool.disconnect()


def test_factory_switch_refuses_the_whole_push(factory_lab: LabInfo, state_dir: Path) -> None:
    switch_before = switch_state(factory_lab)
    sparks_before = {h: spark_state(factory_lab, h) for h in ("spark01", "spark03")}
    r = fabric("push", "--lab", FACTORY, "--apply", state_dir=state_dir)
    assert r.returncode == 3, r.stderr
    assert "REFUSED crs804" in r.stderr
    assert "is on `bridge`, the fabric bridge of this topology" in r.stderr
    assert "/interface/bridge/port/remove [find interface=ether1]" in r.stderr
    assert "nothing is changed on any host while the switch is refused" in r.stderr
    assert "Traceback" not in r.stderr
    assert switch_state(factory_lab) == switch_before
    assert {h: spark_state(factory_lab, h) for h in sparks_before} == sparks_before


def test_foreign_definitions_refuse_that_host_then_are_adopted(factory_lab: LabInfo,
                                                               state_dir: Path) -> None:
    prepare_switch(factory_lab)
    in_host(factory_lab, "spark03", "sh", "-c",
            f"printf '%s' '{CX7_TEXT}' > {CX7} && chmod 600 {CX7}")
    dry = fabric("push", "--lab", FACTORY, state_dir=state_dir)
    assert dry.returncode == 3, dry.stderr
    assert (f"{CX7} (netplan file) defines enP2p1s0f0np0, enp1s0f0np0") in dry.stderr
    r = fabric("push", "--lab", FACTORY, "--apply", state_dir=state_dir)
    assert r.returncode == 3, r.stderr
    assert "REFUSED spark03" in r.stderr and "--adopt-foreign" in r.stderr
    assert "applied" in r.stderr  # the other hosts went ahead
    assert "40-fabric.yaml" not in spark_state(factory_lab, "spark03")["netplan"]
    assert "40-fabric.yaml" in spark_state(factory_lab, "spark01")["netplan"]
    adopt = fabric("push", "--lab", FACTORY, "--apply", "--adopt-foreign", state_dir=state_dir)
    assert adopt.returncode == 0, adopt.stderr
    state = spark_state(factory_lab, "spark03")
    assert "40-cx7.yaml" not in state["netplan"] and "40-fabric.yaml" in state["netplan"]
    v4 = {a["local"] for link in state["ip"] for a in link.get("addr_info", [])
          if link["ifname"].startswith(("enp1s0f0", "enP2p1s0f0")) and a["family"] == "inet"}
    assert v4 == {"198.19.0.3", "198.19.1.3"}, "a stray playbook address is still there"
    run = adopt.stdout.split("RUN_ID ")[1].split()[0]
    saved = state_dir / "runs" / run / "spark03" / "netplan" / "40-cx7.yaml"
    assert saved.read_text() == CX7_TEXT
    back = fabric("push", "rollback", run, "--lab", FACTORY, state_dir=state_dir)
    assert back.returncode == 0, back.stderr
    assert spark_state(factory_lab, "spark03")["netplan"].get("40-cx7.yaml") == CX7_TEXT


@pytest.fixture(scope="module")
def sudo_lab(ring4_sudo: LabInfo) -> LabInfo:
    return ring4_sudo


def test_sudo_that_asks_for_a_password_is_refused(sudo_lab: LabInfo, state_dir: Path) -> None:
    before = {h: spark_state(sudo_lab, h) for h in ("spark01", "spark02")}
    r = fabric("push", "--lab", sudo_lab.name, "--apply", state_dir=state_dir)
    assert r.returncode == 3, r.stderr
    user = sudo_lab.ssh_user
    assert user != "root"
    assert f"user {user} cannot change spark01 (sudo asks for a password" in r.stderr
    assert f"{user} ALL=(ALL) NOPASSWD: ALL" in r.stderr
    assert {h: spark_state(sudo_lab, h) for h in before} == before
    facts = fabric("facts", "--lab", sudo_lab.name, state_dir=state_dir)
    assert facts.returncode == 0, facts.stderr  # reading needs no password
