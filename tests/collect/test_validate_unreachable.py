"""When no host answers, `fabric validate` exits 3 AND replaces the gate's report with a
failing one, so an older passing report can never open the gate. A host that cannot be read is
one `host.reachable` row with the reason; only hosts unreachable: exit 3; a failure on a host
that answered: exit 1; the report fails either way."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import validators
from fabric.facts import Facts, facts_from_json
from fabric.gate import default_report_path
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.report.model import (
    REACHABLE_CHECK,
    CheckResult,
    Report,
    exit_code,
    report_to_json,
    unreachable,
)
from fabric.validate import fold_unreachable
from tests.collect.helpers import FIXTURES
from tests.conftest import run_cli
from tests.remote.conftest import write_inventory


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
    code, _, err = run_cli(["gate", "-i", str(inv), "-t", "star4", "--no-live"], capsys)
    assert code == 0, err  # the (offline) gate is open before the failed run

    code, _, err = run_cli(["validate", "-i", str(inv), "-t", "star4", "--only", "link"],
                           capsys)
    assert code == 3, err
    assert "no host could be reached" in " ".join(err.split())
    saved = json.loads(path.read_text())
    assert saved["passed"] is False
    assert {r["status"] for r in saved["results"]} == {"error"}
    # one row per host, with the reason: not one per check and host
    assert sorted(r["host"] for r in saved["results"]) == [
        "crs804", "spark01", "spark02", "spark03", "spark04"]
    assert {r["check"] for r in saved["results"]} == {"host.reachable"}
    assert all("refused" in r["message"] or "could not be read" in r["message"]
               for r in saved["results"])
    code, _, err = run_cli(["gate", "-i", str(inv), "-t", "star4", "--no-live"], capsys)
    assert code == 1, err


# --- recorded facts with a host that could not be read ----------------------------------------

REASON = "ssh 198.18.4.2:22: connection refused (is sshd running?)"


def _recorded_without(host: str) -> tuple[Intent, Facts]:
    """The recorded star4 lab facts (tests/fixtures/facts/lab_star4.json) with `host` lost."""
    facts = facts_from_json((FIXTURES / "lab_star4.json").read_text())
    intent = load_intent("star4", None)
    sparks = {h: f for h, f in facts.sparks.items() if h != host}
    return intent, dataclasses.replace(facts, sparks=sparks, errors={host: REASON})


def _report(intent: Intent, results: list[CheckResult]) -> Report:
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash,
                        started=datetime.now(UTC).isoformat(), duration_s=1.0, results=results)


def test_an_unreachable_host_is_one_row_with_the_reason() -> None:
    intent, facts = _recorded_without("spark02")
    raw = validators.run_checks(intent, facts)
    assert len([r for r in raw if r.status == "error" and r.host == "spark02"]) > 5
    folded = fold_unreachable(raw, facts.errors)
    about = [r for r in folded if r.host == "spark02" and r.status == "error"]
    assert len(about) == 1
    [row] = about
    assert row.check == REACHABLE_CHECK and REASON in row.message and row.hint
    # everything else is judged as before
    assert [r for r in folded if r is not row] == [
        r for r in raw if not (r.status == "error" and r.host == "spark02")]


def test_exit_3_when_only_hosts_were_unreachable_1_when_a_reachable_host_failed() -> None:
    intent, facts = _recorded_without("spark02")
    unreachable_only = [r for r in fold_unreachable(validators.run_checks(intent, facts),
                                                    facts.errors)
                        if r.check == REACHABLE_CHECK or not r.failed]
    report = _report(intent, unreachable_only)
    assert (report.passed, exit_code(report)) == (False, 3)
    assert unreachable(report) == {"spark02": unreachable_only[0].message}
    broken = CheckResult("mtu.interface", "fail", host="spark03", expected=9000, actual=1500,
                         message="spark03 MTU 1500", hint="set it")
    report = _report(intent, [*unreachable_only, broken])
    assert (report.passed, exit_code(report)) == (False, 1)
    report = _report(intent, [r for r in unreachable_only if r.check != REACHABLE_CHECK])
    assert exit_code(report) == 0


def test_timings_say_where_the_run_went_also_when_nothing_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    inv = _nothing_answers(tmp_path, monkeypatch)
    timings = tmp_path / "timings.json"
    code, _, err = run_cli(["validate", "-i", str(inv), "-t", "star4", "--only", "link",
                            "--timings", str(timings)], capsys)
    assert code == 3, err
    data = json.loads(timings.read_text())
    assert [p["phase"] for p in data["phases"]] == ["intent", "facts", "checks",
                                                    "report"]
    assert all(p["s"] >= 0 and p["end_s"] >= p["start_s"] for p in data["phases"])
    assert data["total_s"] == data["phases"][-1]["end_s"] and data["imports_s"] >= 0


def test_the_report_json_is_made_once_for_json_and_the_gates_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--json FILE` and the gate's copy are the same bytes, encoded (and redacted) once."""
    import fabric.report.model as model

    inv = _nothing_answers(tmp_path, monkeypatch)
    made: list[str] = []
    to_dict = model.report_to_dict

    def counted(report: Report) -> dict[str, object]:
        made.append(report.topology)
        return to_dict(report)

    monkeypatch.setattr(model, "report_to_dict", counted)
    out = tmp_path / "report.json"
    code, _, err = run_cli(["validate", "-i", str(inv), "-t", "star4", "--only", "link",
                            "--json", str(out)], capsys)
    assert code == 3, err
    assert made == ["star4"]
    assert out.read_bytes() == default_report_path(None).read_bytes()
    assert json.loads(out.read_text())["passed"] is False


def _nothing_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An inventory whose every host refuses (the switch's API port and the Sparks' port 1),
    with the state kept under `tmp_path`."""
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("FABRIC_ROUTEROS_PORT", "1")
    monkeypatch.setenv("FABRIC_KNOWN_HOSTS", str(tmp_path / "known_hosts"))
    return write_inventory(tmp_path / "inv")


def test_the_unreachable_line_prints_the_hosts_reasons_as_they_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A reason holding `[sudo]` is text, not rich markup (the bracketed word vanished)."""
    import fabric.cli.validate as cli_validate

    inv = _nothing_answers(tmp_path, monkeypatch)
    intent = load_intent("star4", inv)
    why = "sudo: a password is required ([sudo] password for dgx:)"
    report = Report.build(topology="star4", intent_hash=intent.intent_hash,
                          started=datetime.now(UTC).isoformat(), duration_s=1.0,
                          results=[CheckResult(REACHABLE_CHECK, "error", host="spark01",
                                               message=why)])
    facts = Facts(collected="now", topology="star4", errors={"spark01": why})
    monkeypatch.setattr(cli_validate, "_run", lambda *a, **k: (report, facts))
    code, _, err = run_cli(["validate", "-i", str(inv), "-t", "star4", "--only", "link"],
                           capsys)
    assert code == 3, err
    assert f"unreachable: spark01: {why}" in " ".join(err.split())
