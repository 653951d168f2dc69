"""Time in the lab: every Spark's `chronyd -x` follows the lab's time server, so `time.offset`
passes for real on a healthy lab, and the lab's time server leaves with the lab."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fabric.lab.lifecycle import builder
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import build, in_host, validate

pytestmark = pytest.mark.lab


def test_time_offset_is_judged_for_real_and_passes(star4: LabInfo, tmp_path: Path) -> None:
    code, report, err = validate(star4.name, tmp_path, "--only", "time")
    assert code == 0, err
    results = report["results"]
    assert {(x["host"], x["status"]) for x in results} == {
        (f"spark0{n}", "pass") for n in range(1, 5)}
    assert all("(chrony)" in x["message"] for x in results)
    tracking = in_host(star4, "spark01", "su", "-s", "/bin/sh", star4.ssh_user, "-c",
                       "chronyc -n tracking")
    assert "Leap status     : Normal" in tracking
    server = json.loads((star4.dir / "lab.json").read_text())["timeserver"]["address"]
    assert f"({server})" in tracking


def test_the_time_server_and_the_saved_report_go_with_the_lab(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.gate import REPORT_NAME

    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path))
    name = "t-time-gone"
    info = build("ring4", name, switch_prepared=True)
    ntp = json.loads((info.dir / "lab.json").read_text())["timeserver"]
    report = tmp_path / "labs" / name / REPORT_NAME
    report.parent.mkdir(parents=True)
    report.write_text("{}")  # what `fabric validate --lab` leaves for `fabric gate`
    assert builder.down(name)
    assert not report.exists(), "a rebuilt lab would find the old report"
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert ntp["namespace"] not in listed
    links = subprocess.run(["ip", "-j", "link"], capture_output=True, text=True,
                           check=True).stdout
    assert ntp["root_veth"] not in {x["ifname"] for x in json.loads(links)}


def test_time_fault_fails_that_spark_only_and_heals(star4: LabInfo, tmp_path: Path) -> None:
    """A Spark pointed at a time server that is not there never synchronises: time.offset
    fails for it alone; heal points it back and it passes again."""
    from fabric.lab import faults

    def validate_time() -> tuple[int, list[dict[str, str]]]:
        code, report, _ = validate(star4.name, tmp_path, "--only", "time")
        return code, report["results"]

    faults.inject(star4.name, "time", "spark02")
    try:
        code, results = validate_time()
        assert code == 1
        failed = {x["host"] for x in results if x["status"] == "fail"}
        assert failed == {"spark02"}
        assert "not synchronised" in next(x["message"] for x in results
                                          if x["host"] == "spark02")
    finally:
        faults.heal(star4.name)
    code, results = validate_time()
    assert code == 0 and all(x["status"] == "pass" for x in results)
