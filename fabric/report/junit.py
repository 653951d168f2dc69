"""The report as JUnit XML: one testsuite per family, one testcase per result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from fabric.report.model import CheckResult, Report


def _value(value: Any) -> str:
    return json.dumps(value, default=str)


def _details(r: CheckResult) -> str:
    return (f"{r.message}\nexpected: {_value(r.expected)}\nactual:   {_value(r.actual)}\n"
            f"hint: {r.hint}")


def _case(suite: ET.Element, r: CheckResult, seen: Counter[str]) -> None:
    where = " ".join(x for x in (r.host, r.link) if x) or "fabric"
    name = f"{r.check} [{where}]"
    seen[name] += 1
    if seen[name] > 1:  # e.g. both twins of one host on one link: keep names unique
        name += f" #{seen[name]}"
    case = ET.SubElement(suite, "testcase", classname=r.check, name=name, time="0")
    if r.status in ("fail", "error"):
        tag = "failure" if r.status == "fail" else "error"
        el = ET.SubElement(case, tag, message=r.message, type=r.check)
        el.text = _details(r)
    elif r.status == "skip":
        ET.SubElement(case, "skipped", message=r.message)
    elif r.status == "warn":
        out = ET.SubElement(case, "system-out")
        out.text = "WARNING: " + _details(r)


def to_junit(report: Report) -> ET.Element:
    """`<testsuites>` with per-family `<testsuite>` counts that match their testcases."""
    by_family: dict[str, list[CheckResult]] = defaultdict(list)
    for r in report.results:
        by_family[r.family].append(r)
    counts = report.counts()
    root = ET.Element("testsuites", name=f"fabric validate {report.topology}",
                      tests=str(len(report.results)), failures=str(counts["fail"]),
                      errors=str(counts["error"]), skipped=str(counts["skip"]),
                      time=f"{report.duration_s:.3f}")
    for family, results in by_family.items():
        c = {s: sum(1 for r in results if r.status == s) for s in ("fail", "error", "skip")}
        suite = ET.SubElement(root, "testsuite", name=family, tests=str(len(results)),
                              failures=str(c["fail"]), errors=str(c["error"]),
                              skipped=str(c["skip"]), timestamp=report.started,
                              time="0")
        props = ET.SubElement(suite, "properties")
        for name, value in (("topology", report.topology), ("intent_hash", report.intent_hash),
                            ("lab", report.lab or "")):
            ET.SubElement(props, "property", name=name, value=value)
        seen: Counter[str] = Counter()
        for r in results:
            _case(suite, r, seen)
    return root


def write_junit(report: Report, path: Path | str) -> None:
    """Write JUnit XML (failures, errors and skipped elements; warnings in system-out)."""
    tree = ET.ElementTree(to_junit(report))
    ET.indent(tree)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tree.write(target, encoding="utf-8", xml_declaration=True)
