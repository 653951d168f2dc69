"""The gate: may a launch go ahead? Only on a passed report, fresh, made for the current intent,
on the fabric as it is now.

A gate fails closed: a missing, unreadable or corrupt report, a report dated in the future,
one made for another intent, one too old, one with any failure, or one that judged only
some families (`fabric validate --only`) all refuse (`evaluate`).
`check_live` then re-reads the fabric's fingerprint (`fabric.fingerprint`: link state, speed,
MTU, addresses, LLDP neighbours and GIDs per twin, each switch lane's status, rate and MTU)
over one SSH session per Spark and one API session, a narrow batch, and refuses when it
differs from the one the report stored, naming each change (exit 1), or when a host cannot be
read (exit 3). So a report cannot open the gate for a lab rebuilt under the same name, or a
twin whose MTU was changed since.

Reports live in the state directory (`fabric.statedir`: `$FABRIC_STATE_DIR`, else
`$XDG_STATE_HOME/fabric`, else `~/.local/state/fabric`). `fabric validate` saves
`last-report.json` there (per lab: `labs/<lab>/last-report.json`); `fabric gate` reads it when
no REPORT is named.
`forget_lab` removes a lab's saved report (`fabric lab down` calls it).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabric.report.model import Report, ReportError, report_from_json
from fabric.statedir import state_dir

if TYPE_CHECKING:
    from fabric.target import Target

#: Default freshness: a report older than this does not open the gate.
DEFAULT_MAX_AGE_S = 3600.0
#: Clock skew tolerated for a report dated slightly in the future.
FUTURE_SKEW_S = 120.0
REPORT_NAME = "last-report.json"


def default_report_path(lab: str | None = None) -> Path:
    """`<state>/last-report.json`, or `<state>/labs/<lab>/last-report.json` for a lab."""
    root = state_dir()
    return (root / "labs" / lab / REPORT_NAME) if lab else root / REPORT_NAME


def forget_lab(name: str) -> list[Path]:
    """Remove the saved report(s) of lab `name` from the state directory (its directory too,
    when nothing else is left in it); the paths removed. A lab that is torn down must not
    leave a pass behind for a lab later built under the same name."""
    lab_dir = state_dir() / "labs" / name
    removed: list[Path] = []
    for path in (lab_dir / REPORT_NAME, *lab_dir.glob(f".{REPORT_NAME}.*")):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    with contextlib.suppress(OSError):  # absent, or it holds other state (a launch record)
        lab_dir.rmdir()
    return removed


@dataclass(frozen=True)
class GateVerdict:
    """Open (`ok`) or shut, and why; the loaded report when there was one. `code`: the exit
    code of a shut gate (1, or 3 when the live fabric could not be read)."""

    ok: bool
    reason: str
    report: Report | None = None
    code: int = 1

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else self.code


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


def unjudged_families(report: Report) -> list[str]:
    """The check families a report did not judge in full: a `--only` run passes for what it
    judged, never for the rest. Where the report records its checks (every `fabric
    validate` report does), a family missing one of its registered checks counts; else the
    families it lists. A report that records neither is judged by its results alone."""
    from validators.registry import FAMILIES, REGISTRY

    if report.checks:
        ran = set(report.checks)
        return [f for f in FAMILIES
                if any(c.split(".", 1)[0] == f and c not in ran for c in REGISTRY)]
    if not report.families:
        return []
    return [f for f in FAMILIES if f not in report.families]


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
    unjudged = unjudged_families(report)
    if unjudged:
        return GateVerdict(False, f"the report did not judge all of {', '.join(unjudged)} "
                           "(a `--only` run): run `fabric validate` without --only", report)
    return GateVerdict(True, f"passed {len(report.results)} results for {report.topology} "
                       f"(intent {intent_hash}), {age:.0f} s old", report)


#: Reads the live fingerprint of a target: (fingerprint, {host: why it could not be read}).
LiveReader = Callable[["Target"], tuple[dict[str, Any], dict[str, str]]]


def live_fingerprint(target: Target) -> tuple[dict[str, Any], dict[str, str]]:
    """The target's fingerprint read now: the narrow facts batch on every Spark (one SSH
    session each) and the switch (one API session), in parallel."""
    from fabric.collect.gather import collect_facts
    from fabric.fingerprint import fingerprint

    facts = collect_facts(target, narrow=True)
    return fingerprint(target.intent, facts), facts.errors


def check_live(verdict: GateVerdict, target: Target,
               read: LiveReader | None = None) -> GateVerdict:
    """Keep an open verdict open only if the fabric, read now (`read`, default
    `live_fingerprint`), has the fingerprint the report stored: a change shuts it naming each
    one (exit 1); a host that cannot be read shuts it with exit 3. A shut verdict is returned
    as it is (nothing is read)."""
    report = verdict.report
    if not verdict.ok or report is None:
        return verdict
    if not report.fingerprint:
        return GateVerdict(False, "the report carries no fingerprint of the fabric it judged "
                           "(made by an older `fabric validate`), so it cannot be matched to "
                           "the fabric as it is now: validate again", report)
    from fabric.fingerprint import diff

    t0 = time.monotonic()
    now, errors = (read or live_fingerprint)(target)
    took = time.monotonic() - t0
    if errors:
        why = "; ".join(f"{h}: {r}" for h, r in sorted(errors.items()))
        return GateVerdict(False, f"cannot compare the report with the live fabric, "
                           f"unreachable: {why}", report, code=3)
    changes = diff(report.fingerprint, now)
    if changes:
        more = f" (+{len(changes) - 10} more)" if len(changes) > 10 else ""
        return GateVerdict(False, f"the fabric changed since the report ({len(changes)}): "
                           + "; ".join(changes[:10]) + more + ": validate again", report)
    twins, lanes = len(now.get("sparks") or {}), len(now.get("lanes") or {})
    return GateVerdict(True, f"{verdict.reason}; the live fabric matches it ({twins} twins, "
                       f"{lanes} lanes, read in {took:.1f} s)", report)
