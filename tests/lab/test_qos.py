"""Lossless RoCE on the star4 lab (topology star4-lossless): the dry run lists the switch QoS
and the host changes, --apply makes both ends agree (qos.consistent judged), a second apply
changes nothing, a lane flipped underneath fails qos.consistent naming the lane and the twins,
the persisted script re-applies a twin's QoS as udev would on hotplug, rollback removes every
QoS change (the twins' link-level pause too, which the PFC write turned off), and a switch
below RouterOS 7.15 is refused with the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import routeros_api

from fabric.devices.crs804.read_switch_qos import read_switch_qos
from fabric.devices.spark.platform import QOS_RULES_PATH, QOS_SCRIPT_PATH
from fabric.facts import Facts, facts_from_json
from fabric.intent.build import load_intent
from fabric.lab.lifecycle.registry import LabInfo
from fabric.lab.routeros.export import qos_lines
from fabric.lab.routeros.state import StateFile
from fabric.remote.shell import ros_rows
from fabric.report.model import CheckResult
from tests.lab.conftest import Labs, fabric, in_host
from validators import run_checks

pytestmark = pytest.mark.lab

LAB = "t-qos-star4"
SPARKS = ("spark01", "spark02", "spark03", "spark04")
TWINS = ("enp1s0f0np0", "enP2p1s0f0np0")


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Iterator[LabInfo]:
    with labs.private("star4-lossless", LAB, switch_prepared=True) as info:
        yield info


@pytest.fixture(scope="module")
def fresh(lab: LabInfo) -> dict[str, Any]:
    return qos_state(lab)


def api_call(lab: LabInfo, path: str, command: str, args: dict[str, str]) -> Any:
    pool = routeros_api.RouterOsApiPool(lab.mgmt["crs804"], username=lab.routeros_user,
                                        password=lab.routeros_password, port=lab.api_port,
                                        plaintext_login=True)
    try:
        api = pool.get_api()
        if command == "rows":
            return ros_rows(api, path)
        if command == "qos":
            version = ros_rows(api, "/system/resource")[0]["version"]
            return read_switch_qos(api, version,
                                   ros_rows(api, "/ip/neighbor/discovery-settings")[0])
        return api.get_resource(path).call(command, args)
    finally:
        pool.disconnect()


def switch_state(lab: LabInfo) -> StateFile:
    return StateFile(lab.dir / "switch-state.json")


def qos_state(lab: LabInfo) -> dict[str, Any]:
    """Everything QoS at both ends: the switch's QoS config (as /export shows it) and LLDP
    DCBX, each twin's `mlnx_qos -i` report and link-level pause (`ethtool -a`: a PFC write
    turns it off), and the persisted files."""
    state = switch_state(lab).load()
    out: dict[str, Any] = {"switch": qos_lines(state), "dcbx": state.discovery.lldp_dcbx}
    for host in SPARKS:
        for twin in TWINS:
            out[f"{host}:{twin}"] = in_host(lab, host, "mlnx_qos", "-i", twin)
            out[f"{host}:{twin}:pause"] = in_host(lab, host, "ethtool", "-a", twin)
        out[f"{host}:files"] = in_host(lab, host, "sh", "-c", f"ls {QOS_SCRIPT_PATH} "
                                       f"{QOS_RULES_PATH} 2>/dev/null; true")
    return out


def judged(lab: LabInfo, state_dir: Path) -> list[CheckResult]:
    """qos.consistent on facts collected from the lab (`fabric facts`); the switch's QoS is
    read through its API where the facts do not carry it yet."""
    path = state_dir / "facts.json"
    r = fabric("facts", "--lab", LAB, "--json", str(path), state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    facts: Facts = facts_from_json(path.read_text())
    if facts.switch is not None and facts.switch.qos is None:
        import dataclasses

        facts = dataclasses.replace(facts, switch=dataclasses.replace(
            facts.switch, qos=api_call(lab, "", "qos", {})))
    intent = load_intent(lab.dir / "topology.yaml", lab.inventory_dir)
    return run_checks(intent, facts, {"qos"})


def test_dry_run_lists_switch_qos_and_host_changes(lab: LabInfo, state_dir: Path,
                                                  fresh: dict[str, Any]) -> None:
    r = fabric("push", "--lab", LAB, state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    q = "/interface/ethernet/switch/qos"
    for line in (f"{q}/profile add name=roce dscp=26 traffic-class=3",
                 f"{q}/profile add name=cnp dscp=48 traffic-class=6",
                 f"{q}/map/ip add dscp=26 profile=roce",
                 f"{q}/priority-flow-control add name=pfc-tc3 traffic-class=3 rx=yes tx=yes",
                 f"{q}/port set qsfp56-dd-3-1 trust-l3: ignore -> keep, pfc: disabled -> pfc-tc3",
                 "/interface/ethernet/switch set switch1 qos-hw-offloading: no -> yes",
                 "/ip/neighbor/discovery-settings set lldp-dcbx: no -> yes",
                 "$ mlnx_qos -i enp1s0f0np0 --trust dscp --pfc 0,0,0,1,0,0,0,0",
                 f"+++ {QOS_SCRIPT_PATH} (intent)", f"+++ {QOS_RULES_PATH} (intent)"):
        assert line in r.stderr, line
    assert "dry run: 99 changes on 5 hosts" in r.stderr
    assert qos_state(lab) == fresh, "a dry run changed something"
    assert "Priority trust state: pcp" in fresh["spark01:enp1s0f0np0"]


def test_apply_makes_both_ends_agree(lab: LabInfo, state_dir: Path) -> None:
    r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert "applied 99 changes" in r.stderr and "verified" in r.stderr
    results = judged(lab, state_dir)
    assert [x.status for x in results] == ["pass"] * 9, [x.message for x in results]
    v = fabric("validate", "--lab", LAB, "--json", str(state_dir / "report.json"),
               state_dir=state_dir)
    report = json.loads((state_dir / "report.json").read_text())
    others = [x for x in report["results"] if x["check"] != "qos.consistent"
              and x["status"] in ("fail", "error")]
    assert others == [], v.stderr
    qos = [x for x in report["results"] if x["check"] == "qos.consistent"]
    uncollected = [x for x in qos if "was not collected" in x["message"]]
    if uncollected:  # the switch's QoS is not in the collected facts yet (see README)
        assert qos == uncollected and len(qos) == 1
    else:
        assert {x["status"] for x in qos} == {"pass"} and v.returncode == 0, v.stderr


def test_second_apply_changes_nothing(lab: LabInfo, state_dir: Path) -> None:
    before = qos_state(lab)
    r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert "0 changes" in r.stderr and "RUN_ID" not in r.stdout
    assert qos_state(lab) == before


def test_a_lane_flipped_underneath_fails_naming_lane_and_twins(lab: LabInfo,
                                                               state_dir: Path) -> None:
    api_call(lab, "/interface/ethernet/switch/qos/port", "set",
             {"numbers": "qsfp56-dd-3-1", "trust-l3": "ignore"})
    failing = [x for x in judged(lab, state_dir) if x.status == "fail"]
    assert len(failing) == 2
    for x in failing:
        assert x.host == "crs804" and x.link == "spark03:p0--crs804:qsfp56-dd-3-1"
        assert "crs804 qsfp56-dd-3-1 (trust-l3 ignore" in x.message
        assert "disagree on DSCP trust" in x.message
    assert {t for t in TWINS for x in failing if f"spark03 {t}" in x.message} == set(TWINS)
    r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)  # push puts the lane back
    assert r.returncode == 0 and "applied 1 changes" in r.stderr, r.stderr
    assert {x.status for x in judged(lab, state_dir)} == {"pass"}


def test_the_persisted_script_reapplies_a_twin_as_udev_would(lab: LabInfo) -> None:
    rules = in_host(lab, "spark02", "cat", QOS_RULES_PATH)
    assert 'KERNEL=="enp1s0f0np0|enP2p1s0f0np0"' in rules
    assert f'RUN+="{QOS_SCRIPT_PATH} %k"' in rules
    in_host(lab, "spark02", "mlnx_qos", "-i", "enP2p1s0f0np0", "--trust", "pcp", "--pfc",
            "0,0,0,0,0,0,0,0")  # as after a cable hotplug: the NIC's defaults again
    in_host(lab, "spark02", QOS_SCRIPT_PATH, "enP2p1s0f0np0")  # what udev runs on "add"
    report = in_host(lab, "spark02", "mlnx_qos", "-i", "enP2p1s0f0np0")
    assert "Priority trust state: dscp" in report
    assert "enabled     0   0   0   1   0   0   0   0" in report


def test_rollback_removes_every_qos_change(lab: LabInfo, state_dir: Path,
                                           fresh: dict[str, Any]) -> None:
    runs = sorted((state_dir / "runs").iterdir())
    first = next(p for p in runs
                 if json.loads((p / "manifest.json").read_text())["status"] == "applied")
    r = fabric("push", "rollback", first.name, "--lab", LAB, state_dir=state_dir)
    assert r.returncode == 0, r.stderr
    assert qos_state(lab) == fresh
    assert "dry run: 99 changes" in fabric("push", "--lab", LAB, state_dir=state_dir).stderr


def test_a_switch_below_7_15_is_refused_with_the_reason(lab: LabInfo, state_dir: Path,
                                                        fresh: dict[str, Any]) -> None:
    with switch_state(lab).edit() as state:
        version, state.version = state.version, "7.12.1 (stable)"
    try:
        r = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
        assert r.returncode == 3, r.stderr
        assert ("qos: lossless needs RouterOS 7.15 or newer on crs804 (the QoS, PFC and ECN "
                "menus of its switch chip; 7.17 recommended) and it reports 7.12.1 (stable)"
                in " ".join(r.stderr.split()))
        assert qos_state(lab) == fresh  # nothing changed anywhere
    finally:
        with switch_state(lab).edit() as state:
            state.version = version
