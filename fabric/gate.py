"""The gate: may a launch go ahead? Only on a passed report, fresh, made for the current intent.

A gate fails closed: a missing, unreadable or corrupt report, a report dated in the future,
one made for another intent, one too old or one with any failure all refuse.

Reports live in the state directory: `$FABRIC_STATE_DIR`, else `$XDG_STATE_HOME/fabric`,
else `~/.local/state/fabric`. `fabric validate` saves `last-report.json` there (per lab:
`labs/<lab>/last-report.json`); `fabric gate` reads it when no REPORT is named.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fabric.report.model import Report, ReportError, report_from_json

#: Default freshness: a report older than this does not open the gate.
DEFAULT_MAX_AGE_S = 3600.0
#: Clock skew tolerated for a report dated slightly in the future.
FUTURE_SKEW_S = 120.0
REPORT_NAME = "last-report.json"


def state_dir() -> Path:
    """Where run state (the last report) is kept."""
    env = os.environ.get("FABRIC_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "fabric"


def default_report_path(lab: str | None = None) -> Path:
    """`<state>/last-report.json`, or `<state>/labs/<lab>/last-report.json` for a lab."""
    root = state_dir()
    return (root / "labs" / lab / REPORT_NAME) if lab else root / REPORT_NAME


#: The default report path as resolved at import (see `default_report_path` for the rules).
DEFAULT_REPORT_PATH = default_report_path()


@dataclass(frozen=True)
class GateVerdict:
    """Open (`ok`) or shut, and why; the loaded report when there was one."""

    ok: bool
    reason: str
    report: Report | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def _age_s(report: Report, now: datetime) -> float:
    try:
        started = datetime.fromisoformat(report.started)
    except ValueError:
        raise ReportError(f"started {report.started!r} is not an ISO-8601 time") from None
    if started.tzinfo is None:
        raise ReportError(f"started {report.started!r} has no time zone")
    return (now - started).total_seconds() - report.duration_s


def load_report(path: Path) -> Report:
    """Read a report file; ReportError (with the path) when it is missing or corrupt."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ReportError(f"no report at {path} (run `fabric validate` first)") from None
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return report_from_json(text)
    except ReportError as exc:
        raise ReportError(f"{path}: corrupt report: {exc}") from None


def evaluate(path: Path, intent_hash: str, *, max_age_s: float = DEFAULT_MAX_AGE_S,
             now: datetime | None = None) -> GateVerdict:
    """Judge the report at `path` against the current intent hash and a maximum age."""
    now = now or datetime.now(UTC)
    try:
        report = load_report(path)
        age = _age_s(report, now)
    except ReportError as exc:
        return GateVerdict(False, str(exc))
    if report.intent_hash != intent_hash:
        return GateVerdict(False, f"the report was made for intent {report.intent_hash} "
                           f"({report.topology}); the current intent is {intent_hash}: "
                           "validate again", report)
    if age < -FUTURE_SKEW_S:
        return GateVerdict(False, f"the report is dated {-age:.0f} s in the future "
                           f"({report.started}); check the clock", report)
    if age > max_age_s:
        return GateVerdict(False, f"the report is stale: {age:.0f} s old, the limit is "
                           f"{max_age_s:.0f} s (started {report.started}): validate again",
                           report)
    bad = [r for r in report.results if r.status in ("fail", "error")]
    if not report.passed or bad:
        first = "; ".join(f"{r.check} {r.host or r.link or ''}: {r.message}".strip()
                          for r in bad[:3])
        more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
        return GateVerdict(False, f"the report did not pass: {len(bad)} failed "
                           f"result(s): {first or 'passed is false'}{more}", report)
    if not report.results:
        return GateVerdict(False, "the report has no results: nothing was validated", report)
    return GateVerdict(True, f"passed {len(report.results)} results for {report.topology} "
                       f"(intent {intent_hash}), {age:.0f} s old", report)
