"""Terminal summary: failures first, then folded passes, then the verdict line."""

from __future__ import annotations

import io

from rich.console import Console

from fabric.intent.model import Intent
from fabric.report import print_terminal
from fabric.report.model import Report
from tests.report.sample import passing_report


def _render(report: Report) -> str:
    buf = io.StringIO()
    print_terminal(report, Console(file=buf, width=200, color_system=None))
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
