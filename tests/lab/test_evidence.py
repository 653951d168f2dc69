"""Evidence that holds when the fabric changes under it (issue 22), on configured labs.

- Two cables re-plugged into each other's switch ports the way a person does it (both lanes
  down, the cables moved, both up; nothing restarted, no LLDP table touched): both ends still
  list the neighbour learned before the move, as in the field; the very next validation fails
  both cables naming the swap and its fix, and the gate refuses. Swapped back, the next
  validation judges every cable from fresh evidence and passes.
- The same with two Spark-to-Spark cables on the ring.
- One Spark unreachable, everything else healthy: a full validation exits 3 with one row for
  that Spark, and every other host is judged and passes (an idle lane's few frames are no
  evidence of drops).
- Five healthy full validations of star8 in a row: no failure and no warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import (
    RING_LINK,
    STAR_LINK,
    Inject,
    Labs,
    fabric,
    in_host,
    lldp_neighbors,
    validate,
)

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state directory of this module's runs (the reports the gate reads)."""
    return tmp_path_factory.mktemp("state")


def _results(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [r for r in report.get("results", []) if r["check"] == check]


def _cabling(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["link"]: r for r in _results(report, "cabling.lldp") if r["link"]}


def _worse_than_pass(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report.get("results", []) if r["status"] in ("warn", "fail", "error")]


def _switch_neighbors(lab: str) -> set[tuple[str, str, str]]:
    """(lane, identity, interface-name) of every `/ip/neighbor` row, read through the
    toolkit's own switch facts (the API, as for a real CRS804)."""
    proc = fabric("facts", "--lab", lab, "--hosts", "crs804", "--json", "-")
    assert proc.returncode == 0, proc.stderr[-2000:]
    sw = json.loads(proc.stdout)["switch"]
    return {(n["local_port"], n["system_name"], n["port_id"]) for n in sw["neighbors"]}


def test_a_swap_at_the_switch_fails_at_once_and_the_swap_back_passes_at_once(
        star4_pushed: LabInfo, inject: Inject, state: Path, tmp_path: Path) -> None:
    lab = star4_pushed.name
    swapped = {STAR_LINK["spark02"], STAR_LINK["spark03"]}
    code, report, err = validate(lab, tmp_path, "--only", "cabling", state_dir=state)
    assert code == 0, err[-3000:]
    inject(lab, "swap", "crs804:qsfp56-dd-2-1,crs804:qsfp56-dd-3-1")
    # the field's evidence: both ends keep what they learned before the move
    sw = _switch_neighbors(lab)
    assert ("qsfp56-dd-2-1", "spark02", "enp1s0f0np0") in sw, sw  # learned before the move
    assert ("qsfp56-dd-3-1", "spark03", "enp1s0f0np0") in sw, sw
    ports = {p for _, system, p in lldp_neighbors(star4_pushed, "spark02") if system == "crs804"}
    assert "qsfp56-dd-2-1" in ports, ports  # spark02's lldpd still lists its old lane

    code, report, err = validate(lab, tmp_path, state_dir=state)  # the very next, and full
    assert code == 1, err[-3000:]
    cabling = _cabling(report)
    failed = {link for link, r in cabling.items() if r["status"] == "fail"}
    assert failed == swapped, json.dumps(cabling, indent=1)
    for link in swapped:
        r = cabling[link]
        assert "spark02 and spark03 are swapped at crs804 qsfp56-dd-2-1 / qsfp56-dd-3-1" \
            in r["message"], r["message"]
        assert r["hint"] == "swap the cables back, or change the topology"
    others = [r for r in _worse_than_pass(report) if r["link"] not in swapped]
    assert not others, json.dumps(others, indent=1)
    gate = fabric("gate", "--lab", lab, state_dir=state)
    assert gate.returncode == 1 and "did not pass" in gate.stderr, gate.stderr[-2000:]

    # judged from the switch's fresh entries
    _healed_passes_at_once(lab, tmp_path, state, "LLDP confirms it from crs804:")


def _healed_passes_at_once(lab: str, tmp_path: Path, state: Path, confirmed: str) -> None:
    """`fabric lab heal` (the cables put back), then the very next cabling validation passes
    every cable, each confirmed as `confirmed` says, with no warning."""
    proc = fabric("lab", "heal", "--name", lab)
    assert proc.returncode == 0, proc.stderr
    code, report, err = validate(lab, tmp_path, "--only", "cabling", state_dir=state)
    assert code == 0, err[-3000:]
    cabling = _cabling(report)
    assert len(cabling) == 4 and {r["status"] for r in cabling.values()} == {"pass"}
    for r in cabling.values():
        assert confirmed in r["message"], r["message"]
    assert not _worse_than_pass(report), json.dumps(_worse_than_pass(report), indent=1)


def test_two_ring_cables_swapped_fail_at_once_and_pass_once_put_back(
        ring4_pushed: LabInfo, inject: Inject, state: Path, tmp_path: Path) -> None:
    lab = ring4_pushed.name
    swapped = {RING_LINK[1], RING_LINK[3]}
    inject(lab, "swap", "spark01:p0,spark03:p0")
    code, report, err = validate(lab, tmp_path, "--only", "cabling", state_dir=state)
    assert code == 1, err[-3000:]
    cabling = _cabling(report)
    assert {k for k, r in cabling.items() if r["status"] == "fail"} == swapped, cabling
    for link in swapped:
        r = cabling[link]
        assert "spark02 and spark04 are swapped at spark01:p0 / spark03:p0" in r["message"], \
            r["message"]
        assert r["hint"] == "swap the cables back, or change the topology"
    # from an end that heard this run's beacon
    _healed_passes_at_once(lab, tmp_path, state, "LLDP confirms it from spark")


def test_one_unreachable_spark_is_exit_3_with_one_row_and_the_rest_judged(
        star4_pushed: LabInfo, inject: Inject, state: Path, tmp_path: Path) -> None:
    lab = star4_pushed.name
    inject(lab, "sshd-stop", "spark04")
    code, report, err = validate(lab, tmp_path, state_dir=state)
    assert code == 3, err[-3000:]
    bad = [r for r in report["results"] if r["status"] in ("fail", "error")]
    assert [(r["check"], r["host"]) for r in bad] == [("host.reachable", "spark04")], \
        json.dumps(bad, indent=1)
    judged = {r["host"] for r in report["results"] if r["status"] == "pass" and r["host"]}
    assert {"spark01", "spark02", "spark03", "crs804"} <= judged, judged
    drops = [r for r in _results(report, "counters.drops") if r["host"] == "crs804"]
    assert drops and all(r["status"] == "pass" for r in drops), drops


def test_lldp_frames_are_no_rx_drops_on_an_idle_lane(star4_pushed: LabInfo) -> None:
    """A lane whose Spark sends nothing but LLDP: RouterOS takes LLDP in its discovery, it
    is no drop (the lab's kernel counted each as rx_dropped before the emulator read them)."""
    lab = star4_pushed.name

    def dropped() -> int:
        data = json.loads(in_host(star4_pushed, "crs804", "ip", "-s", "-j", "link", "show",
                                  "qsfp56-dd-4-1"))
        return int(data[0]["stats64"]["rx"]["dropped"])

    before = dropped()
    for _ in range(3):  # three announcements from both of spark04's twins
        proc = fabric("facts", "--lab", lab, "--hosts", "spark04", "--json", "-")
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert dropped() == before


@pytest.fixture(scope="module")
def star8_pushed(labs: Labs) -> LabInfo:
    return labs("star8", "t-star8-pushed", switch_prepared=True, pushed=True)


def test_five_healthy_star8_runs_in_a_row_neither_fail_nor_warn(
        star8_pushed: LabInfo, state: Path, tmp_path: Path) -> None:
    for run in range(5):  # every check, bandwidth rounds of 1 s (the profile's are 3 s)
        code, report, err = validate(star8_pushed.name, tmp_path, "--duration", "1",
                                     state_dir=state)
        worse = _worse_than_pass(report)
        assert code == 0 and not worse, f"run {run + 1}: exit {code}\n" + json.dumps(
            worse, indent=1) + err[-2000:]
