"""link: twins up, negotiated speed, switch lanes as planned."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id


def test_healthy_fabrics_pass(star4: Intent, star_facts: Facts, ring4: Intent,
                              ring_facts: Facts) -> None:
    failures(star4, star_facts)
    failures(ring4, ring_facts)


def test_twin_without_carrier_is_named(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark03")[1]
    facts = builder.replace_netdev(ring_facts, "spark03", plan.netdev, carrier=False)
    [r] = failures(ring4, facts, ("link.twin_up", "spark03", plan.link_id))
    assert plan.netdev in r.message and "carrier" in r.message


def test_autoneg_lane_at_100g_names_the_lane_and_the_fix(star4: Intent,
                                                        star_facts: Facts) -> None:
    facts = builder.replace_lane(star_facts, "qsfp56-dd-2-1", auto_negotiation=True,
                                 rate="100Gbps")
    link = link_id(star4, "spark02")
    [r] = failures(star4, facts, ("link.switch_lane", "crs804", link))
    assert "auto-negotiation is on" in r.message
    assert r.hint == ("/interface/ethernet/set qsfp56-dd-2-1 auto-negotiation=no "
                      "speed=200G-baseCR4")
    assert r.expected == {"auto_negotiation": False, "rate": "200Gbps"}
    assert r.actual == {"auto_negotiation": True, "rate": "100Gbps"}


def test_fec_mismatch(star4: Intent, star_facts: Facts) -> None:
    facts = builder.replace_lane(star_facts, "qsfp56-dd-4-1", fec_mode="off")
    [r] = failures(star4, facts, ("link.switch_lane", "crs804", link_id(star4, "spark04")))
    assert "fec-mode=fec91" in r.hint


def test_spark_at_100g_fails_speed(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark02")[0]
    et = dict(ring_facts.sparks["spark02"].ethtool)
    et[plan.netdev] = dataclasses.replace(et[plan.netdev], speed_mbps=100000)
    facts = builder.replace_spark(ring_facts, "spark02", ethtool=et)
    [r] = failures(ring4, facts, ("link.speed", "spark02", plan.link_id))
    assert (r.expected, r.actual) == (200000, 100000)


def test_down_twin_skips_speed_with_reason(ring4: Intent, ring_facts: Facts) -> None:
    from validators.link import check_speed

    plan = ring4.interfaces("spark01")[0]
    facts = builder.replace_netdev(ring_facts, "spark01", plan.netdev, admin_up=False)
    skips = [r for r in check_speed(ring4, facts) if r.status == "skip"]
    assert len(skips) == 1 and "link.twin_up" in skips[0].message


def test_unreachable_host_is_an_error_and_others_stay_clean(ring4: Intent,
                                                           ring_facts: Facts) -> None:
    sparks = {k: v for k, v in ring_facts.sparks.items() if k != "spark03"}
    facts = dataclasses.replace(ring_facts, sparks=sparks,
                                errors={"spark03": "ssh: connection timed out"})
    from validators import run_checks

    results = run_checks(ring4, facts)
    errors = [r for r in results if r.status == "error"]
    assert errors and all(r.host == "spark03" for r in errors)
    assert all("connection timed out" in r.message for r in errors)
    assert not [r for r in results if r.status in ("fail", "warn")]


def test_unreachable_switch_errors_only_the_switch(star4: Intent, star_facts: Facts) -> None:
    from validators import run_checks

    facts = dataclasses.replace(star_facts, switch=None,
                                errors={"crs804": "routeros-api: login failed"})
    results = run_checks(star4, facts)
    errors = [r for r in results if r.status == "error"]
    assert {r.check for r in errors} == {"link.switch_lane", "mtu.switch", "switch.bridge",
                                         "cabling.lldp"}
    assert all(r.host == "crs804" and "login failed" in r.message for r in errors)
    assert not [r for r in results if r.status in ("fail", "warn")]
    # the Sparks' own LLDP still confirms every cable
    assert [r.status for r in results if r.check == "cabling.lldp" and r.link] == ["pass"] * 4
