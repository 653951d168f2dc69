"""Report model and JSON: the contract's keys exactly, round trip, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric.intent.model import Intent
from fabric.report import write_json
from fabric.report.model import (
    CheckResult,
    Report,
    ReportError,
    exit_code,
    report_from_json,
    report_to_json,
)
from tests.report.sample import passing_report

CONTRACT_KEYS = ["schema", "topology", "intent_hash", "started", "duration_s", "passed",
                 "results"]
EXTRA_KEYS = ["lab", "families", "schedule", "facts_errors", "fingerprint", "checks"]
RESULT_KEYS = ["check", "status", "host", "link", "expected", "actual", "message", "hint"]


def test_json_has_the_contract_keys(report: Report) -> None:
    data = json.loads(report_to_json(report))
    assert list(data) == CONTRACT_KEYS + EXTRA_KEYS
    assert data["schema"] == "fabric.report/1"
    assert data["passed"] is False
    for r in data["results"]:
        assert list(r) == RESULT_KEYS
        assert r["status"] in ("pass", "warn", "fail", "skip", "error")
        assert r["check"].split(".")[0] in data["families"]
    fail = next(r for r in data["results"] if r["check"] == "mtu.interface"
                and r["status"] == "fail")
    assert fail["host"] == "spark04" and fail["link"] == "spark04:p0--crs804:qsfp56-dd-4-1"
    assert (fail["expected"], fail["actual"]) == (9000, 1500)


def test_round_trip(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    write_json(report, path)
    assert report_from_json(path.read_text()) == report


def test_write_json_to_stdout(report: Report, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(report, None)
    assert json.loads(capsys.readouterr().out)["topology"] == "star4"


def test_exit_codes(report: Report, star4: Intent) -> None:
    assert exit_code(report) == 1
    good = passing_report(star4)
    assert good.passed and exit_code(good) == 0
    lying = Report(**{**good.__dict__, "results": (CheckResult("mtu.path", "error"),)})
    assert exit_code(lying) == 1


@pytest.mark.parametrize("text, why", [
    ("{", "not JSON"),
    ("[]", "JSON object"),
    ('{"schema": "other/1"}', "schema"),
    ('{"schema": "fabric.report/1", "results": []}', "topology"),
    ('{"schema": "fabric.report/1", "topology": "t", "intent_hash": "h", "started": "s", '
     '"duration_s": 1, "passed": "yes", "results": []}', "passed"),
    ('{"schema": "fabric.report/1", "topology": "t", "intent_hash": "h", "started": "s", '
     '"duration_s": 1, "passed": true, "results": [{"check": "x.y", "status": "ok"}]}',
     "status"),
])
def test_corrupt_reports_are_refused(text: str, why: str) -> None:
    with pytest.raises(ReportError, match=why):
        report_from_json(text)
