"""Secrets are masked in any record that leaves the process (facts, reports)."""

from __future__ import annotations

from fabric.facts import Facts, PingFact
from fabric.redact import MASK, redact
from fabric.report.model import CheckResult, Report


def test_secrets_are_masked_everywhere_in_facts_and_reports() -> None:
    secret = "pw=s3cret-Zq"
    ping = PingFact("spark01", "a", "spark02", "b", "198.19.0.2", 8972, 0, 0,
                    error=f"probe failed: login {secret} refused")
    facts = Facts(collected="now", topology="star4", errors={"crs804": f"bad {secret}"},
                  pings=(ping,), schedule={"raw": [f"x {secret}"]})
    report = Report.build(topology="star4", intent_hash="h", started="2026-11-30T00:00:00+00:00",
                          duration_s=1.0, results=[CheckResult("mtu.path", "error",
                                                               message=f"ssh {secret}",
                                                               actual={"why": secret})])
    clean_facts, clean_report = redact(facts, [secret]), redact(report, [secret])
    assert secret not in repr(clean_facts) and secret not in repr(clean_report)
    assert clean_facts.pings[0].error == f"probe failed: login {MASK} refused"
    assert clean_report.results[0].actual == {"why": MASK}
    assert redact(facts, []) is facts
