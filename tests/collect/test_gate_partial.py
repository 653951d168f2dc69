"""A `fabric validate --only …` report passes for what it judged, never for the rest: the gate
(and so a launch) refuses it, naming the families it did not judge; a report that judged
every family opens it as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fabric.gate import evaluate, unjudged_families
from fabric.intent.model import Intent
from fabric.report import write_json
from fabric.report.model import Report
from fabric.validate import selected_families
from tests.conftest import run_cli
from tests.validators import builder
from validators import FAMILIES, run_checks, select

from .helpers import star4


def _report(intent: Intent, only: set[str] | None) -> Report:
    started = (datetime.now(UTC) - timedelta(seconds=30)).isoformat(timespec="seconds")
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash, started=started,
                        duration_s=1.0, families=selected_families(only),
                        checks=select(only),
                        results=run_checks(intent, builder.healthy(intent), only))


@pytest.fixture
def intent() -> Intent:
    return star4()


def test_a_partial_pass_shuts_the_gate_naming_what_was_not_judged(
        intent: Intent, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    write_json(_report(intent, {"link", "mtu", "addr", "route", "cabling"}), path)
    verdict = evaluate(path, intent.intent_hash)
    assert verdict.report is not None and verdict.report.passed  # it did pass, for those
    assert not verdict.ok and "gid" in verdict.reason and "counters" in verdict.reason
    code, _, err = run_cli(["gate", str(path), "-t", "star4", "--no-live"], capsys)
    assert code == 1 and "--only" in err and "SHUT" in err


def test_a_report_that_judged_every_family_opens(intent: Intent, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    report = _report(intent, None)
    assert unjudged_families(report) == [] and set(report.families) == set(FAMILIES)
    write_json(report, path)
    code, _, err = run_cli(["gate", str(path), "-t", "star4", "--no-live"], capsys)
    assert code == 0 and "OPEN" in err


def test_a_family_judged_in_part_is_not_judged(intent: Intent) -> None:
    """`--only link.speed,mtu,…` (every family named, one of them by a single check) lists
    family link, but link.twin_up and link.switch_lane did not run: the gate stays shut."""
    only = {"link.speed", *(f for f in FAMILIES if f != "link")}
    report = _report(intent, only)
    assert set(report.families) == set(FAMILIES) and unjudged_families(report) == ["link"]


def test_a_report_listing_families_but_not_checks_needs_them_all(intent: Intent) -> None:
    import dataclasses

    report = dataclasses.replace(_report(intent, {"link"}), checks=())
    assert unjudged_families(report) == [f for f in FAMILIES if f != "link"]


def test_a_report_without_a_family_list_is_judged_by_its_results(intent: Intent) -> None:
    """Hand-made or archived reports that list neither checks nor families keep the old
    rules."""
    report = Report.build(topology=intent.name, intent_hash=intent.intent_hash,
                          started=datetime.now(UTC).isoformat(), duration_s=1.0,
                          results=run_checks(intent, builder.healthy(intent), {"link"}))
    assert unjudged_families(report) == []
