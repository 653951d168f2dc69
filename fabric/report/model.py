"""CheckResult and Report: the contract between validators, writers and the gate.

The JSON shape (`report_to_json`) is a contract (DESIGN.md, Report JSON): keys are only ever
added. `exit_code` maps a report onto the CLI's exit codes (0 passed, 1 a check failed, 3 the
run could not complete: hosts that could not be read and nothing else failed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

SCHEMA = "fabric.report/1"

Status = Literal["pass", "warn", "fail", "skip", "error"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "skip", "error")
#: How bad a status is; the worst result of a host or link gives its colour.
SEVERITY: dict[str, int] = {"skip": 0, "pass": 1, "warn": 2, "fail": 3, "error": 4}
FAILING: frozenset[str] = frozenset({"fail", "error"})
RESULT_KEYS = ("check", "status", "host", "link", "expected", "actual", "message", "hint")
#: The one `error` row of a host whose facts could not be read (its checks did not run).
REACHABLE_CHECK = "host.reachable"


class ReportError(ValueError):
    """A report file that is missing a field, has the wrong schema or is not JSON."""


@dataclass(frozen=True)
class CheckResult:
    """One judgement: what was checked, where, expected vs actual, and how to fix it."""

    check: str
    status: Status
    host: str | None = None
    link: str | None = None
    expected: Any = None
    actual: Any = None
    message: str = ""
    hint: str = ""

    @property
    def family(self) -> str:
        return self.check.split(".", 1)[0]

    @property
    def failed(self) -> bool:
        return self.status in FAILING


@dataclass(frozen=True)
class Report:
    """The outcome of one validation run (schema fabric.report/1)."""

    topology: str
    intent_hash: str
    started: str
    duration_s: float
    passed: bool
    results: tuple[CheckResult, ...]
    schema: str = SCHEMA
    lab: str | None = None
    families: tuple[str, ...] = ()
    schedule: dict[str, Any] = field(default_factory=dict)
    facts_errors: dict[str, str] = field(default_factory=dict)
    #: The judged fabric's state (`fabric.fingerprint`); `fabric gate` compares it live.
    fingerprint: dict[str, Any] = field(default_factory=dict)
    #: The checks the run selected (`fabric validate --only` narrows them); empty: not
    #: recorded (an older or hand-made report). `fabric gate` wants every registered one.
    checks: tuple[str, ...] = ()

    @classmethod
    def build(cls, *, topology: str, intent_hash: str, started: str, duration_s: float,
              results: Iterable[CheckResult], lab: str | None = None,
              families: Iterable[str] = (), schedule: Mapping[str, Any] | None = None,
              facts_errors: Mapping[str, str] | None = None,
              fingerprint: Mapping[str, Any] | None = None,
              checks: Iterable[str] = ()) -> Report:
        """A report whose `passed` is derived from its results (no fail, no error)."""
        res = tuple(results)
        return cls(topology=topology, intent_hash=intent_hash, started=started,
                   duration_s=round(duration_s, 3), passed=not any(r.failed for r in res),
                   results=res, lab=lab, families=tuple(families),
                   schedule=dict(schedule or {}), facts_errors=dict(facts_errors or {}),
                   fingerprint=dict(fingerprint or {}), checks=tuple(checks))

    def counts(self) -> dict[str, int]:
        """Results per status, every status present (zero when none)."""
        c = Counter(r.status for r in self.results)
        return {s: c.get(s, 0) for s in STATUSES}

    def ordered(self) -> list[CheckResult]:
        """Results worst first (error, fail, warn, pass, skip), stable within a status."""
        rank = {"error": 0, "fail": 1, "warn": 2, "pass": 3, "skip": 4}
        return sorted(self.results, key=lambda r: rank[r.status])


def worst(statuses: Iterable[str]) -> str | None:
    """The most severe status of several (None if there are none)."""
    items = list(statuses)
    return max(items, key=SEVERITY.__getitem__) if items else None


def _worst_by(report: Report, key: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for r in report.results:
        name = getattr(r, key)
        if name is not None:
            out[name] = worst([out.get(name, "skip"), r.status]) or r.status
    return out


def host_status(report: Report) -> dict[str, str]:
    """Each host's worst status over the results that name it."""
    return _worst_by(report, "host")


def link_status(report: Report) -> dict[str, str]:
    """Each link's worst status over the results that name it."""
    return _worst_by(report, "link")


def unreachable(report: Report) -> dict[str, str]:
    """Hosts that could not be read, each with its `host.reachable` message."""
    return {r.host or "?": r.message for r in report.results
            if r.check == REACHABLE_CHECK and r.failed}


def exit_code(report: Report) -> int:
    """The CLI contract: 0 passed; 1 a check failed or errored on a host that answered; 3 the
    run could not complete (hosts could not be read) and nothing else failed."""
    failed = [r for r in report.results if r.failed]
    if not failed:
        return 0 if report.passed else 1
    return 3 if all(r.check == REACHABLE_CHECK for r in failed) else 1


def result_to_dict(result: CheckResult) -> dict[str, Any]:
    return {key: getattr(result, key) for key in RESULT_KEYS}


def report_to_dict(report: Report) -> dict[str, Any]:
    """The contract's keys first, in contract order, then the additive extras."""
    return {
        "schema": report.schema,
        "topology": report.topology,
        "intent_hash": report.intent_hash,
        "started": report.started,
        "duration_s": report.duration_s,
        "passed": report.passed,
        "results": [result_to_dict(r) for r in report.results],
        "lab": report.lab,
        "families": list(report.families),
        "schedule": report.schedule,
        "facts_errors": report.facts_errors,
        "fingerprint": report.fingerprint,
        "checks": list(report.checks),
    }


def report_to_json(report: Report) -> str:
    return json.dumps(report_to_dict(report), indent=2, default=str) + "\n"


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        raise ReportError(f"report has no {key!r}")
    value = data[key]
    ok = (isinstance(value, bool) if kind is bool
          else isinstance(value, kind) and not isinstance(value, bool))
    if not ok:
        raise ReportError(f"report field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _result(data: Any, i: int) -> CheckResult:
    if not isinstance(data, dict):
        raise ReportError(f"results[{i}] is not an object")
    status = data.get("status")
    if status not in STATUSES:
        raise ReportError(f"results[{i}].status is {status!r}, not one of {', '.join(STATUSES)}")
    check = data.get("check")
    if not isinstance(check, str) or not check:
        raise ReportError(f"results[{i}].check is missing")
    return CheckResult(check=check, status=cast(Status, status), host=data.get("host"),
                       link=data.get("link"), expected=data.get("expected"),
                       actual=data.get("actual"), message=str(data.get("message") or ""),
                       hint=str(data.get("hint") or ""))


def report_from_json(text: str) -> Report:
    """Load a report; ReportError names what is wrong (not JSON, wrong schema, bad field)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ReportError("a report is a JSON object")
    schema = _field(data, "schema", str)
    if schema != SCHEMA:
        raise ReportError(f"schema is {schema!r}, expected {SCHEMA!r}")
    results = _field(data, "results", list)
    return Report(
        topology=_field(data, "topology", str),
        intent_hash=_field(data, "intent_hash", str),
        started=_field(data, "started", str),
        duration_s=float(_field(data, "duration_s", (int, float))),
        passed=_field(data, "passed", bool),
        results=tuple(_result(r, i) for i, r in enumerate(results)),
        schema=schema,
        lab=data.get("lab"),
        families=tuple(data.get("families") or ()),
        schedule=dict(data.get("schedule") or {}),
        facts_errors=dict(data.get("facts_errors") or {}),
        fingerprint=_fingerprint(data.get("fingerprint")),
        checks=tuple(str(c) for c in data.get("checks") or ()),
    )


def _fingerprint(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ReportError(f"report field 'fingerprint' has the wrong type ({type(value).__name__})")
    return value
