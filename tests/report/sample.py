"""A report with one failure of each interesting kind, built from star4 facts."""

from __future__ import annotations

from pathlib import Path

from fabric.intent.model import Intent
from fabric.report.model import Report
from tests.validators import builder
from tests.validators.test_bw import probed, slow_at
from validators import FAMILIES, run_checks

#: star4 with the lab's link profile (veth: bandwidth judged against peers only).
STAR4_VETH = Path(__file__).resolve().parents[1] / "fixtures" / "validators" / "star4-veth.yaml"
#: The lane toward spark01, shaped one way: the bandwidth tests into spark01 are slow.
EGRESS_1 = "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"


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


def one_way_slow_report(intent: Intent) -> Report:
    """Bandwidth measured both ways; only the way toward spark01 is slow (0.25 Gb/s), and
    spark01's own way out shows its acknowledgements queueing there (0.41 Gb/s)."""
    facts = probed(intent, slow_at(EGRESS_1), acks=0.41)
    return Report.build(topology=intent.name, intent_hash=intent.intent_hash,
                        started="2026-11-30T00:00:00+00:00", duration_s=9.0,
                        results=run_checks(intent, facts))
