"""addr and route: planned addresses, uniqueness, twin subnets, no fabric default route."""

from __future__ import annotations

from fabric.facts import Facts, RouteFact
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures


def test_wrong_address(star4: Intent, star_facts: Facts) -> None:
    plan = star4.interfaces("spark02")[1]
    facts = builder.replace_netdev(star_facts, "spark02", plan.netdev,
                                   addresses=("10.210.1.99/24",))
    [r] = failures(star4, facts, ("addr.plan", "spark02", plan.link_id))
    assert r.expected == [str(plan.address)] and r.actual == ["10.210.1.99/24"]
    assert f"ip addr add {plan.address} dev {plan.netdev}" in r.hint


def test_duplicate_address_names_the_host_that_should_not_have_it(star4: Intent,
                                                                  star_facts: Facts) -> None:
    theirs = star4.interfaces("spark01")[0]
    mine = star4.interfaces("spark04")[0]
    facts = builder.replace_netdev(star_facts, "spark04", mine.netdev,
                                   addresses=(str(mine.address), str(theirs.address)))
    rs = failures(star4, facts, ("addr.plan", "spark04", mine.link_id),
                  ("addr.unique", "spark04", mine.link_id))
    uniq = next(r for r in rs if r.check == "addr.unique")
    assert "spark01" in uniq.message


def test_twins_in_one_subnet(ring4: Intent, ring_facts: Facts) -> None:
    a, b = ring4.interfaces("spark02")[:2]
    assert a.link_id == b.link_id
    other = a.address.network.network_address + 200
    facts = builder.replace_netdev(ring_facts, "spark02", b.netdev,
                                   addresses=(f"{other}/24",))
    failures(ring4, facts, ("addr.plan", "spark02", b.link_id),
             ("addr.twin_subnets", "spark02", a.link_id))


def test_default_route_via_fabric_netdev(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark03")[0]
    routes = (*ring_facts.sparks["spark03"].routes,
              RouteFact("default", plan.netdev, str(plan.peer.address.ip)
                        if plan.peer.address else None))
    facts = builder.replace_spark(ring_facts, "spark03", routes=routes)
    [r] = failures(ring4, facts, ("route.no_default", "spark03", plan.link_id))
    assert "ip route del default" in r.hint


def test_mgmt_route_via_fabric_netdev(star4: Intent, star_facts: Facts) -> None:
    plan = star4.interfaces("spark01")[0]
    routes = (*star_facts.sparks["spark01"].routes, RouteFact("192.168.10.0/25", plan.netdev))
    facts = builder.replace_spark(star_facts, "spark01", routes=routes)
    failures(star4, facts, ("route.no_mgmt", "spark01", plan.link_id))
