"""JUnit and Markdown writers."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from fabric.report import write_junit, write_markdown
from fabric.report.model import Report
from tests.report.sample import EGRESS_1, STAR4_VETH, one_way_slow_report
from tests.validators import builder


def test_junit_parses_and_counts_match(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    write_junit(report, path)
    root = ET.parse(path).getroot()
    cases = root.findall("./testsuite/testcase")
    counts = report.counts()
    assert root.tag == "testsuites"
    assert len(cases) == len(report.results) == int(root.get("tests", "-1"))
    assert len(root.findall(".//failure")) == counts["fail"] == int(root.get("failures", "-1"))
    assert len(root.findall(".//error")) == counts["error"] == int(root.get("errors", "-1"))
    assert len(root.findall(".//skipped")) == counts["skip"] == int(root.get("skipped", "-1"))
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests", "-1")) == len(suite.findall("testcase"))
        assert int(suite.get("failures", "-1")) == len(suite.findall("testcase/failure"))
    names = [c.get("name") for c in cases]
    assert len(set(names)) == len(names)
    failure = root.find(".//failure")
    assert failure is not None and failure.text and "expected:" in failure.text
    assert "hint: /interface/ethernet/set qsfp56-dd-2-1" in failure.text


def test_markdown_lists_failures_first(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    write_markdown(report, path)
    text = path.read_text()
    assert text.index("## Failures") < text.index("## All checks")
    failures = text[text.index("## Failures"):text.index("## All checks")]
    assert "link.switch_lane" in failures and "mtu.interface" in failures
    assert "**FAIL**" in failures and "PASS" not in failures
    assert text.splitlines()[2].startswith("**FAILED: ")


def test_markdown_names_the_failing_direction(tmp_path: Path) -> None:
    intent = builder.intent(str(STAR4_VETH))
    path = tmp_path / "report.md"
    write_markdown(one_way_slow_report(intent), path)
    text = path.read_text()
    failures = text[text.index("## Failures"):text.index("## All checks")]
    rows = [line for line in failures.splitlines() if line.startswith("| **FAIL**")]
    assert len(rows) == 2 and all(f"{intent.links[0].id}, {EGRESS_1}: " in r for r in rows)
