"""The report as a rich table on the terminal: failures first, passes folded per check."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table
from rich.text import Text

from fabric.report.model import Report

STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "error": "bold magenta",
         "skip": "dim"}


def _short(value: object, limit: int = 40) -> str:
    if isinstance(value, dict):
        text = " ".join(f"{k}={v}" for k, v in value.items())
    else:
        text = "—" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verdict(report: Report) -> str:
    """One line: PASSED/FAILED, the counts, topology and intent."""
    counts = report.counts()
    word = "PASSED" if report.passed else "FAILED"
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    lab = f" (lab {report.lab})" if report.lab else ""
    return (f"{word}: {parts or 'no results'} — {report.topology}{lab}, intent "
            f"{report.intent_hash}, {report.duration_s:.1f} s")


def print_terminal(report: Report, console: Console) -> None:
    """Print every non-passing result (worst first, with expected/actual and hint), then one
    row per check for the passes and skips-only checks, then the verdict line. Every cell is
    `Text`: what a host said is printed as it is (a str cell is read as rich markup, where
    `[sudo]` is a style tag and vanished), and no cell is parsed for tags."""
    table = Table(title=f"fabric validate: {report.topology}", title_justify="left",
                  show_lines=False, expand=False)
    for col in ("status", "check", "host", "link", "what"):
        table.add_column(col, overflow="fold")
    shown = [r for r in report.ordered() if r.status not in ("pass", "skip")]
    for r in shown:
        what = Text(r.message)
        if r.expected is not None or r.actual is not None:
            what.append(f"\nexpected {_short(r.expected, 100)}; got {_short(r.actual, 100)}",
                        style="dim")
        if r.hint:
            what.append(f"\nfix: {r.hint}", style="cyan")
        table.add_row(Text(r.status.upper(), style=STYLE[r.status]), Text(r.check),
                      Text(r.host or ""), Text(_short(r.link or "", 48)), what)
    passes = Counter(r.check for r in report.results if r.status == "pass")
    skips: dict[str, str] = {}
    for r in report.results:
        if r.status == "skip":
            skips.setdefault(r.check, r.message)
    for check in dict.fromkeys(r.check for r in report.results):
        if check in passes:
            table.add_row(Text("PASS", style=STYLE["pass"]), Text(check), Text(), Text(),
                          Text(f"{passes[check]} passed"))
        elif check in skips and not any(x.check == check for x in shown):
            table.add_row(Text("SKIP", style=STYLE["skip"]), Text(check), Text(), Text(),
                          Text(skips[check]))
    console.print(table)
    console.print(Text(verdict(report), style="bold green" if report.passed else "bold red"))
