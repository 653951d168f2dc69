"""`fabric doctor` on a lab: an unconfigured lab fails host.ipc (systemd's default RemoveIPC),
a pushed one passes every host check; each host fault (`nm-profile`, `remove-ipc`) fails its
check on the faulted Spark only, and `fabric lab heal` makes doctor pass again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import Inject, Labs, configure, fabric, in_host

pytestmark = pytest.mark.lab

LAB = "t-doc"


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Any:
    with labs.private("star4", LAB, switch_prepared=True) as info:
        yield info


def doctor(lab: str, tmp_path: Path, state_dir: Path) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "doctor.json"
    out.unlink(missing_ok=True)
    proc = fabric("doctor", "--lab", lab, "--json", str(out), state_dir=state_dir)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


def bad(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(r["check"], r["host"]) for r in report["results"]
            if r["status"] in ("fail", "error", "warn")}


def test_unconfigured_lab_fails_remove_ipc_everywhere(lab: LabInfo, tmp_path: Path,
                                                      state_dir: Path) -> None:
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.ipc", h) for h in ("spark01", "spark02", "spark03", "spark04")}
    assert {r["check"].split(".")[0] for r in report["results"]} == {"host"}
    assert (state_dir / "labs" / LAB / "last-doctor.json").exists()
    assert not (state_dir / "labs" / LAB / "last-report.json").exists()  # the gate's: untouched


def test_pushed_lab_passes_doctor(lab: LabInfo, tmp_path: Path, state_dir: Path) -> None:
    configure(LAB, state_dir)
    text = in_host(lab, "spark02", "cat", "/etc/systemd/logind.conf.d/40-fabric.conf")
    assert "RemoveIPC=no" in text
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 0, err
    statuses = {(r["check"], r["status"]) for r in report["results"]}
    assert {c for c, s in statuses if s == "pass"} == {"host.nm", "host.ipc", "host.memory"}
    skip = [r for r in report["results"] if r["status"] == "skip"]
    assert [r["check"] for r in skip] == ["host.pcie"] and "veth" in skip[0]["message"]


def test_nm_profile_fault_fails_host_nm_on_that_twin(lab: LabInfo, tmp_path: Path,
                                                     state_dir: Path, inject: Inject) -> None:
    inject(LAB, "nm-profile", "spark03:enp1s0f0np0")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.nm", "spark03")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "Wired connection 1" in r["message"] and "enp1s0f0np0" in r["message"]
    assert r["link"] == "spark03:p0--crs804:qsfp56-dd-3-1"
    assert "nmcli connection delete" in r["hint"]


def test_remove_ipc_fault_fails_host_ipc_then_heal_passes(lab: LabInfo, tmp_path: Path,
                                                          state_dir: Path,
                                                          inject: Inject) -> None:
    inject(LAB, "remove-ipc", "spark01")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.ipc", "spark01")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "90-lab-fault.conf" in r["message"]
    assert r["hint"].startswith("set RemoveIPC=no in /etc/systemd/logind.conf")
    heal = fabric("lab", "heal", "--name", LAB)
    assert heal.returncode == 0, heal.stderr
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 0, err


def test_bad_input_exits_2(tmp_path: Path, state_dir: Path) -> None:
    proc = fabric("doctor", "--lab", "t-doc-no-such-lab", state_dir=state_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "no lab named t-doc-no-such-lab" in proc.stderr
