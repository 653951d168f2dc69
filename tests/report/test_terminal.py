"""Terminal summary: failures first, then folded passes, then the verdict line."""

from __future__ import annotations

import io

from rich.console import Console

from fabric.intent.model import Intent
from fabric.report import print_terminal
from fabric.report.model import Report
from tests.report.sample import EGRESS_1, STAR4_VETH, one_way_slow_report, passing_report
from tests.validators import builder


def _render(report: Report, width: int = 200) -> str:
    buf = io.StringIO()
    print_terminal(report, Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


def test_failures_first_then_verdict(report: Report) -> None:
    text = _render(report)
    lines = text.splitlines()
    first_fail = next(i for i, line in enumerate(lines) if "FAIL " in line)
    first_pass = next(i for i, line in enumerate(lines) if "PASS " in line)
    assert first_fail < first_pass
    assert "qsfp56-dd-2-1 auto-negotiation=no speed=200G-baseCR4" in text
    assert lines[-1].startswith("FAILED: ")
    assert "2 fail" in lines[-1] or "fail" in lines[-1]


def test_verdict_passed(star4: Intent) -> None:
    assert _render(passing_report(star4)).splitlines()[-1].startswith("PASSED: ")


def test_one_way_failure_names_its_direction() -> None:
    """The slow way toward spark01 fails and is named; spark01's way out only warns."""
    intent = builder.intent(str(STAR4_VETH))
    text = _render(one_way_slow_report(intent), width=600)
    rows = [line for line in text.splitlines() if "bw.link" in line]
    fails = [line for line in rows if "FAIL " in line]
    assert len(fails) == 2 and all(f"{intent.links[0].id}, {EGRESS_1}: 0.25 Gb/s" in line
                                   for line in fails)
    warns = [line for line in rows if "WARN " in line]
    assert len(warns) == 2 and all("spark01→crs804 (crs804:qsfp56-dd-1-1 ingress)" in line
                                   and f"its way back {EGRESS_1} is slower" in line
                                   for line in warns)


def test_what_a_host_said_is_printed_as_it_is() -> None:
    """A skip's reason and a result's host come from the hosts: `[sudo]` or `[/]` in them is
    text, not rich markup (it vanished from the table)."""
    from datetime import UTC, datetime

    from fabric.report.model import CheckResult

    said = "sudo: a password is required ([sudo] password for dgx:) lanes [1,3] [/]"
    report = Report.build(topology="star4", intent_hash="h", started=datetime.now(UTC)
                          .isoformat(), duration_s=1.0, results=[
                              CheckResult("host.nm", "skip", host="spark01", message=said),
                              CheckResult("link.twin_up", "fail", host="[x]spark02",
                                          message=said)])
    text = " ".join(_render(report, width=600).split())
    assert text.count(said) == 2 and "[x]spark02" in text
