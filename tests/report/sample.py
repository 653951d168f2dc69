"""A report with one failure of each interesting kind, built from star4 facts."""

from __future__ import annotations

from fabric.intent.model import Intent
from fabric.report.model import Report
from tests.validators import builder
from validators import FAMILIES, run_checks


def failing_report(intent: Intent) -> Report:
    """star4 with qsfp56-dd-2-1 left on auto-negotiation (100G) and spark04 at MTU 1500."""
    facts = builder.healthy(intent)
    facts = builder.replace_lane(facts, "qsfp56-dd-2-1", auto_negotiation=True, rate="100Gbps")
    plan = intent.interfaces("spark04")[0]
    facts = builder.replace_netdev(facts, "spark04", plan.netdev, mtu=1500)
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash,
                        started="2026-11-30T00:00:00+00:00", duration_s=3.25,
                        results=run_checks(intent, facts), families=FAMILIES)


def passing_report(intent: Intent, started: str = "2026-11-30T00:00:00+00:00") -> Report:
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash, started=started,
                        duration_s=1.0, results=run_checks(intent, builder.healthy(intent)))
