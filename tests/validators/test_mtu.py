"""mtu: twin MTU, switch lane MTU, jumbo DF pings along every path."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id


def test_twin_at_1500(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark04")[0]
    facts = builder.replace_netdev(ring_facts, "spark04", plan.netdev, mtu=1500)
    [r] = failures(ring4, facts, ("mtu.interface", "spark04", plan.link_id))
    assert (r.expected, r.actual) == (9000, 1500)
    assert f"ip link set dev {plan.netdev} mtu 9000" in r.hint


def test_local_mtu_error_in_ping_names_the_sender(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark01")[0]
    pings = tuple(dataclasses.replace(p, received=0, error="local error: message too long, "
                                      "mtu=1500")
                  if (p.src_host, p.src_netdev, p.size) == ("spark01", plan.netdev, 8972) else p
                  for p in ring_facts.pings)
    facts = dataclasses.replace(ring_facts, pings=pings)
    [r] = failures(ring4, facts, ("mtu.path", "spark01", plan.link_id))
    assert "mtu=1500" in r.message


def test_switch_lane_at_1500_and_silent_loss_name_the_lane(star4: Intent,
                                                          star_facts: Facts) -> None:
    facts = builder.replace_lane(star_facts, "qsfp56-dd-3-1", mtu=1500, l2mtu=1514)
    pings = tuple(dataclasses.replace(p, received=0)
                  if p.size == 8972 and "spark03" in (p.src_host, p.dst_host) else p
                  for p in facts.pings)
    facts = dataclasses.replace(facts, pings=pings)
    link = link_id(star4, "spark03")
    rs = failures(star4, facts, ("mtu.switch", "crs804", link), ("mtu.path", "crs804", link))
    path = next(r for r in rs if r.check == "mtu.path")
    assert "qsfp56-dd-3-1" in path.message and "vanish silently" in path.message
    assert "mtu=9000" in path.hint


def test_no_pings_is_a_skip_with_reason(star4: Intent, star_facts: Facts) -> None:
    from validators.mtu import check_path

    [r] = check_path(star4, dataclasses.replace(star_facts, pings=()))
    assert r.status == "skip" and "no DF ping" in r.message


def test_black_hole_on_a_ring_cable(ring4: Intent, ring_facts: Facts) -> None:
    """Jumbo pings across one direct cable vanish (e.g. the far twin at 1500 receiving)."""
    link = ring4.links[2].id
    pings = tuple(dataclasses.replace(p, received=0)
                  if p.size == 8972 and p.link_id == link else p for p in ring_facts.pings)
    facts = dataclasses.replace(ring_facts, pings=pings)
    [r] = failures(ring4, facts, ("mtu.path", None, link))
    assert "vanish silently" in r.message and link in r.hint
