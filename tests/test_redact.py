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


def test_a_record_holding_no_secret_comes_back_as_it_is() -> None:
    """Nothing to mask: the very same object, not a rebuilt copy (the walk rebuilt every
    record of a star8 validation's facts and report, about 20 ms)."""
    ping = PingFact("spark01", "a", "spark02", "b", "198.19.0.2", 8972, 1, 1)
    facts = Facts(collected="now", topology="star4", pings=(ping,),
                  schedule={"raw": ["no secret here"], "secret": ["the key's name is fine"]})
    assert redact(facts, ["s3cret-Zq"]) is facts


def test_a_secret_in_a_key_an_item_or_beside_what_pickle_refuses_is_masked() -> None:
    """A dict key and a list item are masked like fields; a value pickle cannot write (a
    lock) is walked as before."""
    import threading

    secret = "s3cret-Zq"
    value = {f"user:{secret}": [f"x{secret}y", 3], "lock": threading.Lock()}
    clean = redact(value, [secret])
    assert list(clean) == [f"user:{MASK}", "lock"] and clean[f"user:{MASK}"] == [f"x{MASK}y", 3]
    plain = redact({"k": [f"é{secret}"]}, [secret, ""])
    assert plain == {"k": [f"é{MASK}"]}
    unicode_secret = "pässwörd✓"
    assert redact((f"a {unicode_secret} b",), [unicode_secret]) == (f"a {MASK} b",)
