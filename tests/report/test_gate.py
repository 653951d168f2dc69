"""fabric gate: fails closed; opens only on a passed, fresh report for the current intent, made
on the fabric as it is now (its fingerprint, re-read live: faked here, real in
tests/lab/test_gate_live.py). The offline rules run with --no-live."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import fabric.gate
from fabric.facts import Facts
from fabric.fingerprint import diff, fingerprint
from fabric.gate import default_report_path, evaluate, forget_lab
from fabric.intent.model import Intent
from fabric.report import write_json
from fabric.report.model import Report
from fabric.target import Target
from tests.conftest import run_cli
from tests.report.sample import passing_report
from tests.validators import builder

OFF = "--no-live"


def _now(offset_s: float = 0) -> str:
    return (datetime.now(UTC) - timedelta(seconds=offset_s)).isoformat(timespec="seconds")


@pytest.fixture
def good(star4: Intent, tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    write_json(passing_report(star4, started=_now(60)), path)
    return path


def test_good_report_opens(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["gate", str(good), OFF], capsys)
    assert code == 0 and "OPEN" in err


def test_good_report_against_named_topology(good: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(good), "-t", "star4", OFF], capsys)[0] == 0
    code, _, err = run_cli(["gate", str(good), "-t", "ring4", OFF], capsys)
    assert code == 1 and "current intent" in err


def test_missing_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["gate", str(tmp_path / "nope.json")], capsys)
    assert code == 1 and "no report at" in err


def test_corrupt_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"schema": "fabric.report/1", "topology": "star4"')
    code, _, err = run_cli(["gate", str(path), OFF], capsys)
    assert code == 1 and "corrupt report" in err


def test_failed_report(star4: Intent, report: Report, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    write_json(dataclasses.replace(report, started=_now(10)), path)
    code, _, err = run_cli(["gate", str(path), OFF], capsys)
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
    code, _, err = run_cli(["gate", str(path), OFF], capsys)
    assert code == 1 and "stale" in err
    assert run_cli(["gate", str(path), "--max-age", "10000", OFF], capsys)[0] == 0


def test_report_for_another_intent(star4: Intent, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    rep = passing_report(star4, started=_now(5))
    write_json(dataclasses.replace(rep, intent_hash="0123456789abcdef"), path)
    code, _, err = run_cli(["gate", str(path), OFF], capsys)
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
    code, _, err = run_cli(["gate", OFF], capsys)
    assert code == 1 and str(tmp_path / "last-report.json") in err
    write_json(passing_report(star4, started=_now(1)), default_report_path())
    assert run_cli(["gate", OFF], capsys)[0] == 0


@pytest.mark.parametrize("args", [["--max-age", "0"], ["-i", "inventory"],
                                  ["--lab", "x", "-t", "star4"]])
def test_bad_usage_is_2(good: Path, args: list[str],
                        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(good), *args], capsys)[0] == 2


# --- the live fabric --------------------------------------------------------------------------

def _healthy_print(star4: Intent) -> dict[str, Any]:
    return fingerprint(star4, builder.healthy(star4))


@pytest.fixture
def printed(star4: Intent, tmp_path: Path) -> Path:
    """A passing report that stored the healthy star4 fingerprint."""
    path = tmp_path / "printed.json"
    write_json(dataclasses.replace(passing_report(star4, started=_now(30)),
                                   fingerprint=_healthy_print(star4)), path)
    return path


def _live(monkeypatch: pytest.MonkeyPatch, facts: Facts | None, intent: Intent,
          errors: dict[str, str] | None = None) -> list[str]:
    """Make the gate read `facts` as the live fabric; the hosts it was asked about."""
    asked: list[str] = []

    def read(target: Target) -> tuple[dict[str, Any], dict[str, str]]:
        asked.append(target.intent.name)
        return (fingerprint(intent, facts) if facts else {}), dict(errors or {})

    monkeypatch.setattr(fabric.gate, "live_fingerprint", read)
    return asked


def test_live_fabric_as_judged_opens(printed: Path, star4: Intent,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    asked = _live(monkeypatch, builder.healthy(star4), star4)
    code, _, err = run_cli(["gate", str(printed)], capsys)
    assert code == 0 and "OPEN" in err and "live fabric matches" in err
    assert asked == ["star4"]


def test_changed_mtu_shuts_naming_it(printed: Path, star4: Intent,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    plan = star4.interfaces("spark02")[0]
    facts = builder.replace_netdev(builder.healthy(star4), "spark02", plan.netdev, mtu=1500)
    _live(monkeypatch, facts, star4)
    code, _, err = run_cli(["gate", str(printed)], capsys)
    assert code == 1 and "SHUT" in err
    assert f"spark02:{plan.netdev} mtu {plan.mtu} -> 1500" in " ".join(err.split())


def test_unreachable_at_gate_time_is_3(printed: Path, star4: Intent,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _live(monkeypatch, None, star4, {"spark03": "ssh 198.18.0.3:22: connection refused"})
    code, _, err = run_cli(["gate", str(printed)], capsys)
    assert code == 3 and "SHUT" in err and "spark03" in err and "connection refused" in err


def test_no_live_does_not_read_the_fabric(printed: Path, star4: Intent,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    asked = _live(monkeypatch, None, star4, {"spark01": "unreachable"})
    code, _, err = run_cli(["gate", str(printed), OFF], capsys)
    assert code == 0 and asked == [] and "not read" in err


def test_a_report_without_fingerprint_shuts_a_live_gate(good: Path, star4: Intent,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    asked = _live(monkeypatch, builder.healthy(star4), star4)
    code, _, err = run_cli(["gate", str(good)], capsys)
    assert code == 1 and "no fingerprint" in err and asked == []


def test_a_shut_report_is_not_compared_live(star4: Intent, report: Report, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    write_json(dataclasses.replace(report, started=_now(10),
                                   fingerprint=_healthy_print(star4)), path)
    asked = _live(monkeypatch, builder.healthy(star4), star4)
    code, _, err = run_cli(["gate", str(path)], capsys)
    assert code == 1 and "did not pass" in err and asked == []


def test_fingerprint_diff_names_every_change(star4: Intent) -> None:
    then = _healthy_print(star4)
    facts = builder.healthy(star4)
    p2 = star4.interfaces("spark02")[0]
    p3 = star4.interfaces("spark03")[1]
    facts = builder.replace_netdev(facts, "spark02", p2.netdev, mtu=1500, addresses=())
    facts = builder.replace_netdev(facts, "spark03", p3.netdev, carrier=False)
    facts = builder.replace_lane(facts, "qsfp56-dd-4-1", rate="100Gbps", status="no-link")
    gone = dict(facts.sparks)
    del gone["spark01"]
    changes = diff(then, fingerprint(star4, dataclasses.replace(facts, sparks=gone)))
    assert f"spark02:{p2.netdev} mtu 9000 -> 1500" in changes
    assert f"spark02:{p2.netdev} addresses {p2.address} -> none" in changes
    assert f"spark03:{p3.netdev} carrier yes -> no" in changes
    assert "crs804:qsfp56-dd-4-1 status link-ok -> no-link" in changes
    assert "crs804:qsfp56-dd-4-1 rate 200Gbps -> 100Gbps" in changes
    assert {c for c in changes if c.startswith("spark01:")} == {
        f"spark01:{p.netdev}: twin no longer read" for p in star4.interfaces("spark01")}
    assert diff(then, _healthy_print(star4)) == []


def test_fingerprint_covers_lldp_and_gids(star4: Intent) -> None:
    fp = _healthy_print(star4)
    plan = star4.interfaces("spark01")[0]
    twin = fp["sparks"][f"spark01:{plan.netdev}"]
    assert twin["lldp"] == ["crs804:qsfp56-dd-1-1"]
    assert twin["gids"] and all(":" in g for g in twin["gids"])
    assert fp["lanes"]["crs804:qsfp56-dd-1-1"]["lldp"] == ["spark01:p0"]
    assert set(fp["lanes"]) == {f"crs804:qsfp56-dd-{i}-1" for i in range(1, 5)}


def test_forget_lab_removes_its_report(star4: Intent, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path))
    path = default_report_path("L")
    write_json(passing_report(star4, started=_now(1)), path)
    other = default_report_path("M")
    write_json(passing_report(star4, started=_now(1)), other)
    assert forget_lab("L") == [path]
    assert not path.exists() and not path.parent.exists() and other.exists()
    assert forget_lab("L") == []
