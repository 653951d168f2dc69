"""The report as Markdown: verdict, failures first (with expected/actual and fix), then the
rest summarised per check."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from fabric.report.model import Report
from fabric.report.terminal import verdict


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: Report) -> str:
    lines = [f"# fabric validate: {report.topology}", "",
             f"**{verdict(report)}**", "",
             f"- started: {report.started}", f"- intent: `{report.intent_hash}`"]
    if report.lab:
        lines.append(f"- lab: {report.lab}")
    for host, reason in sorted(report.facts_errors.items()):
        lines.append(f"- unreachable: **{host}**: {_cell(reason)}")
    bad = [r for r in report.ordered() if r.status in ("error", "fail", "warn")]
    lines += ["", "## Failures", ""]
    if bad:
        lines += ["| status | check | host | link | message | expected | actual | fix |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| **{r.status.upper()}** | {r.check} | {r.host or ''} | {r.link or ''} | "
                  f"{_cell(r.message)} | {_cell(r.expected)} | {_cell(r.actual)} | "
                  f"{_cell(r.hint)} |" for r in bad]
    else:
        lines.append("None.")
    lines += ["", "## All checks", "", "| check | pass | warn | fail | error | skip | note |",
              "|---|---|---|---|---|---|---|"]
    per: dict[str, Counter[str]] = {}
    notes: dict[str, str] = {}
    for r in report.results:
        per.setdefault(r.check, Counter())[r.status] += 1
        if r.status == "skip":
            notes.setdefault(r.check, r.message)
    for check, c in per.items():
        lines.append(f"| {check} | {c['pass']} | {c['warn']} | {c['fail']} | {c['error']} | "
                     f"{c['skip']} | {_cell(notes.get(check, ''))} |")
    return "\n".join(lines) + "\n"


def write_markdown(report: Report, path: Path | str) -> None:
    """Write the Markdown report (failures listed first)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(to_markdown(report))
