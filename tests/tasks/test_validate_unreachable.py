"""When no host answers, `fabric validate` exits 3 AND replaces the gate's report with a
failing one, so an older passing report can never open the gate."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fabric.gate import default_report_path
from fabric.intent.build import load_intent
from fabric.report.model import CheckResult, Report, report_to_json
from tests.conftest import run_cli
from tests.tasks.conftest import write_inventory


def test_nothing_reachable_exits_3_and_shuts_the_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("FABRIC_ROUTEROS_PORT", "1")  # refused, like the Sparks' port 1
    monkeypatch.setenv("FABRIC_KNOWN_HOSTS", str(tmp_path / "known_hosts"))
    inv = write_inventory(tmp_path / "inv")
    current = load_intent("star4", inv).intent_hash
    earlier_pass = Report.build(topology="star4", intent_hash=current,
                                started=datetime.now(UTC).isoformat(), duration_s=1.0,
                                results=[CheckResult("link.twin_up", "pass", host="spark01")])
    path = default_report_path(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_to_json(earlier_pass))
    code, _, err = run_cli(["gate", "-i", str(inv), "-t", "star4"], capsys)
    assert code == 0, err  # the gate is open before the failed run

    code, _, err = run_cli(["validate", "-i", str(inv), "-t", "star4", "--only", "link"],
                           capsys)
    assert code == 3, err
    assert "no host could be reached" in " ".join(err.split())
    saved = json.loads(path.read_text())
    assert saved["passed"] is False
    assert {r["status"] for r in saved["results"]} == {"error"}
    code, _, err = run_cli(["gate", "-i", str(inv), "-t", "star4"], capsys)
    assert code == 1, err
