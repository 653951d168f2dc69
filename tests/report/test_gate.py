"""fabric gate: fails closed; opens only on a passed, fresh report for the current intent."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fabric.gate import default_report_path, evaluate
from fabric.intent.model import Intent
from fabric.report import write_json
from fabric.report.model import Report
from tests.conftest import run_cli
from tests.report.sample import passing_report


def _now(offset_s: float = 0) -> str:
    return (datetime.now(UTC) - timedelta(seconds=offset_s)).isoformat(timespec="seconds")


@pytest.fixture
def good(star4: Intent, tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    write_json(passing_report(star4, started=_now(60)), path)
    return path


def test_good_report_opens(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["gate", str(good)], capsys)
    assert code == 0 and "OPEN" in err


def test_good_report_against_named_topology(good: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(good), "-t", "star4"], capsys)[0] == 0
    code, _, err = run_cli(["gate", str(good), "-t", "ring4"], capsys)
    assert code == 1 and "current intent" in err


def test_missing_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["gate", str(tmp_path / "nope.json")], capsys)
    assert code == 1 and "no report at" in err


def test_corrupt_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"schema": "fabric.report/1", "topology": "star4"')
    code, _, err = run_cli(["gate", str(path)], capsys)
    assert code == 1 and "corrupt report" in err


def test_failed_report(star4: Intent, report: Report, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    write_json(dataclasses.replace(report, started=_now(10)), path)
    code, _, err = run_cli(["gate", str(path)], capsys)
    assert code == 1 and "did not pass" in err and "link.switch_lane" in err


def test_passed_flag_with_a_failure_inside_still_shuts(star4: Intent, report: Report,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_json(dataclasses.replace(report, started=_now(10), passed=True), path)
    assert not evaluate(path, star4.intent_hash).ok


def test_stale_report(star4: Intent, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    write_json(passing_report(star4, started=_now(7200)), path)
    code, _, err = run_cli(["gate", str(path)], capsys)
    assert code == 1 and "stale" in err
    assert run_cli(["gate", str(path), "--max-age", "10000"], capsys)[0] == 0


def test_report_for_another_intent(star4: Intent, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    rep = passing_report(star4, started=_now(5))
    write_json(dataclasses.replace(rep, intent_hash="0123456789abcdef"), path)
    code, _, err = run_cli(["gate", str(path)], capsys)
    assert code == 1 and "0123456789abcdef" in err and star4.intent_hash in err


def test_report_from_the_future(star4: Intent, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_json(passing_report(star4, started=_now(-3600)), path)
    verdict = evaluate(path, star4.intent_hash)
    assert not verdict.ok and "future" in verdict.reason


def test_default_path_and_state_dir(star4: Intent, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path))
    assert default_report_path() == tmp_path / "last-report.json"
    assert default_report_path("L") == tmp_path / "labs" / "L" / "last-report.json"
    code, _, err = run_cli(["gate"], capsys)
    assert code == 1 and str(tmp_path / "last-report.json") in err
    write_json(passing_report(star4, started=_now(1)), default_report_path())
    assert run_cli(["gate"], capsys)[0] == 0


@pytest.mark.parametrize("args", [["--max-age", "0"], ["-i", "inventory"],
                                  ["--lab", "x", "-t", "star4"]])
def test_bad_usage_is_2(good: Path, args: list[str],
                        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(good), *args], capsys)[0] == 2
