"""Assertions shared by the check-family tests."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from validators import run_checks

Key = tuple[str, str | None, str | None]


def bad(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.status in ("fail", "error", "warn")]


def show(results: list[CheckResult]) -> str:
    return "\n".join(f"{r.status} {r.check} {r.host} {r.link}: {r.message}" for r in results)


def failures(intent: Intent, facts: Facts, *expected: Key) -> list[CheckResult]:
    """Run every check: the failing results are exactly those keyed (check, host, link) in
    `expected` (each at least once), each with a message and a hint; nothing else fails."""
    failing = bad(run_checks(intent, facts))
    keys = {(r.check, r.host, r.link) for r in failing}
    assert keys == set(expected), show(failing)
    for r in failing:
        assert r.message and r.hint, r
        if r.host:
            assert r.host in r.message, r
    return failing


def link_id(intent: Intent, host: str) -> str:
    """The id of the (first) link of a host."""
    return intent.links_of(host)[0].id
