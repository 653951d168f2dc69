"""`fabric launch sglang` refuses without a passing, fresh report for the current intent (exit 1,
the reason, no scripts written); `--force` renders anyway and records the warning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fabric.cli.common import resolve_target
from fabric.report.model import CheckResult, Report, report_to_json
from tests.conftest import run_cli


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private FABRIC_STATE_DIR; the gate's default report lives in it."""
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def write_report(state: Path, *, status: str = "pass", age_s: float = 60.0,
                 intent_hash: str | None = None) -> None:
    star4 = resolve_target(None, None, "star4").intent
    started = (datetime.now(UTC) - timedelta(seconds=age_s)).isoformat()
    result = CheckResult("mtu.path", status, host="spark03",  # type: ignore[arg-type]
                         expected=9000, actual=9000 if status == "pass" else 1500,
                         message="path MTU" if status == "pass" else "path MTU 1500")
    report = Report.build(topology="star4", intent_hash=intent_hash or star4.intent_hash,
                          started=started, duration_s=2.0, results=[result])
    state.mkdir(parents=True, exist_ok=True)
    (state / "last-report.json").write_text(report_to_json(report))


REFUSALS = {
    "missing": ({}, "no report at"),
    "failed": ({"status": "fail"}, "the report did not pass: 1 failed result(s): mtu.path "
               "spark03: path MTU 1500"),
    "stale": ({"age_s": 7200}, "the report is stale"),
    "other intent": ({"intent_hash": "0123456789abcdef"},
                     "the report was made for intent 0123456789abcdef"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_launch_refuses(case: str, state: Path, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    kwargs, reason = REFUSALS[case]
    if case != "missing":
        write_report(state, **kwargs)  # type: ignore[arg-type]
    out = tmp_path / "out"
    code, _, err = run_cli(["launch", "sglang", "-t", "star4", "--out", str(out)], capsys)
    assert code == 1
    flat = " ".join(err.split())
    assert "launch refused:" in flat and reason in flat
    assert not out.exists()  # no scripts, no log


def test_launch_passes_a_fresh_passing_report(state: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    write_report(state)
    out = tmp_path / "out"
    code, _, err = run_cli(["launch", "sglang", "-t", "star4", "--out", str(out)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out.glob("*.sh")) == [
        f"spark0{i}-sglang.sh" for i in range(1, 5)]
    assert not (out / "launch.log").exists()


@pytest.mark.parametrize("case", ["missing", "failed"])
def test_force_renders_and_logs_the_warning(case: str, state: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    if case == "failed":
        write_report(state, status="fail")
    out = tmp_path / "out"
    code, _, err = run_cli(["launch", "sglang", "-t", "star4", "--out", str(out), "--force"],
                           capsys)
    assert code == 0, err
    assert "WARNING: --force" in err
    assert len(list(out.glob("*-sglang.sh"))) == 4
    log = (out / "launch.log").read_text()
    assert "WARNING: --force: launching on a fabric that did not pass the gate" in log
    assert ("no report at" if case == "missing" else "the report did not pass") in log


def test_apply_refuses_a_second_launch(state: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from fabric.launch.state import LaunchRecord, launch_state_path, save_record

    write_report(state)
    save_record(LaunchRecord("20261130T000000Z-abcd", "sglang", "star4", "x", None, False,
                             "2026-11-30T00:00:00+00:00", "/var/tmp/fabric-launch/r",
                             {"spark01": 4242}), launch_state_path())
    out = tmp_path / "out"
    code, _, err = run_cli(["launch", "sglang", "-t", "star4", "--out", str(out), "--apply"],
                           capsys)
    assert code == 2
    assert "run 20261130T000000Z-abcd" in err and "fabric launch stop" in " ".join(err.split())
    assert not out.exists()
