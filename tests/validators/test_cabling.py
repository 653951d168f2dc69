"""cabling: LLDP against the topology; swapped cables and p0<->p0 named with the fix."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts, NeighborFact
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id


def _relabel(neighbors: tuple[NeighborFact, ...], swap: dict[tuple[str, str],
             tuple[str, str]]) -> tuple[NeighborFact, ...]:
    out = []
    for n in neighbors:
        sysname, port = swap.get((n.system_name, n.port_id), (n.system_name, n.port_id))
        out.append(dataclasses.replace(n, system_name=sysname, port_id=port))
    return tuple(out)


def test_swapped_switch_cables(star4: Intent, star_facts: Facts) -> None:
    """spark02 and spark03 plugged into each other's lanes: both links fail, one swap fixes."""
    assert star_facts.switch is not None
    sw = dataclasses.replace(star_facts.switch, neighbors=_relabel(
        star_facts.switch.neighbors, {("spark02", "enp1s0f0np0"): ("spark03", "enp1s0f0np0"),
                                      ("spark03", "enp1s0f0np0"): ("spark02", "enp1s0f0np0")}))
    facts = dataclasses.replace(star_facts, switch=sw)
    for host in ("spark02", "spark03"):
        other = {"spark02": "qsfp56-dd-3-1", "spark03": "qsfp56-dd-2-1"}[host]
        sf = facts.sparks[host]
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(n, port_id=other) for n in sf.neighbors))
    l2, l3 = link_id(star4, "spark02"), link_id(star4, "spark03")
    rs = failures(star4, facts, ("cabling.lldp", "crs804", l2), ("cabling.lldp", "crs804", l3))
    for r in rs:
        assert r.hint == "swap the cables back, or change the topology"
        assert ("spark02 and spark03 are swapped at crs804 qsfp56-dd-2-1 / qsfp56-dd-3-1"
                in r.message or "spark03 and spark02 are swapped at crs804 qsfp56-dd-3-1 / "
                "qsfp56-dd-2-1" in r.message), r.message


def test_cable_on_the_wrong_lane_is_moved(star4: Intent, star_facts: Facts) -> None:
    """spark04's DAC sits in an unused lane (qsfp56-dd-4-5 is absorbed; use 1-5-like names)."""
    assert star_facts.switch is not None
    sw = dataclasses.replace(star_facts.switch, neighbors=tuple(
        dataclasses.replace(n, local_port="qsfp56-dd-4-2") if n.system_name == "spark04" else n
        for n in star_facts.switch.neighbors))
    facts = dataclasses.replace(star_facts, switch=sw)
    facts = builder.replace_spark(facts, "spark04", neighbors=tuple(
        dataclasses.replace(n, port_id="qsfp56-dd-4-2")
        for n in facts.sparks["spark04"].neighbors))
    [r] = failures(star4, facts, ("cabling.lldp", "crs804", link_id(star4, "spark04")))
    assert r.hint == "move the cable at crs804:qsfp56-dd-4-2 to crs804:qsfp56-dd-4-1"


def test_p0_to_p0_on_the_ring(ring4: Intent, ring_facts: Facts) -> None:
    """spark02's two cables swapped: spark01:p0 meets spark02:p0 (ibv_modify_qp error 110)."""
    p0 = ring4.hosts["spark02"].ports["p0"]
    p1 = ring4.hosts["spark02"].ports["p1"]
    swap = {t.netdev: u.netdev for t, u in zip(p0, p1, strict=True)}
    swap |= {u: t for t, u in swap.items()}
    facts = ring_facts
    for host in ("spark01", "spark03"):
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(n, port_id=swap.get(n.port_id, n.port_id))
            if n.system_name == "spark02" else n for n in facts.sparks[host].neighbors))
    facts = builder.replace_spark(facts, "spark02", neighbors=tuple(
        dataclasses.replace(n, local_port=swap[n.local_port])
        for n in facts.sparks["spark02"].neighbors))
    l12 = "spark01:p0--spark02:p1"
    l23 = "spark02:p0--spark03:p1"
    rs = failures(ring4, facts, ("cabling.lldp", "spark02", l12), ("cabling.lldp", "spark02", l23))
    for r in rs:
        assert "p0<->p0" in r.message and "error 110" in r.message
        assert r.hint == "swap the cables back, or change the topology"
        assert "are swapped at" in r.message, r.message


def test_no_lldp_anywhere_is_a_skip(ring4: Intent, ring_facts: Facts) -> None:
    from validators.cabling import check_lldp

    facts = ring_facts
    for host in facts.sparks:
        facts = builder.replace_spark(facts, host, neighbors=())
    rs = check_lldp(ring4, facts)
    assert {r.status for r in rs} == {"skip"} and all("LLDP" in r.message for r in rs)


def test_port_seeing_a_foreign_system(star4: Intent, star_facts: Facts) -> None:
    """spark01's DAC goes to some other switch: name what it sees and where it belongs."""
    assert star_facts.switch is not None
    sw = dataclasses.replace(star_facts.switch, neighbors=tuple(
        n for n in star_facts.switch.neighbors if n.system_name != "spark01"))
    facts = dataclasses.replace(star_facts, switch=sw)
    facts = builder.replace_spark(facts, "spark01", neighbors=tuple(
        dataclasses.replace(n, system_name="mgmt-sw", port_id="ge-0/0/7")
        for n in facts.sparks["spark01"].neighbors))
    [r] = failures(star4, facts, ("cabling.lldp", "crs804", link_id(star4, "spark01")))
    assert r.actual == "mgmt-sw:ge-0/0/7"
    assert r.hint == "move the cable at mgmt-sw:ge-0/0/7 to crs804:qsfp56-dd-1-1"


def test_ring_ends_swapped_across_hosts(ring4: Intent, ring_facts: Facts) -> None:
    """The plugs at spark01:p0 and spark03:p0 exchanged (the lab's `swap` fault)."""
    l1, l3 = "spark01:p0--spark02:p1", "spark03:p0--spark04:p1"
    p0 = {h: ring4.hosts[h].ports["p0"] for h in ("spark01", "spark03")}
    moved = {("spark02", "spark01"): "spark03", ("spark04", "spark03"): "spark01"}
    facts = ring_facts
    for host in ("spark02", "spark04"):  # the far ends now see the other p0
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(n, system_name=moved.get((host, n.system_name), n.system_name))
            for n in facts.sparks[host].neighbors))
    for host, other in (("spark01", "spark03"), ("spark03", "spark01")):
        mine = {t.netdev for t in p0[host]}
        theirs = {n.local_port: n for n in ring_facts.sparks[other].neighbors
                  if n.local_port in {t.netdev for t in p0[other]}}
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(theirs[n.local_port], local_port=n.local_port)
            if n.local_port in mine else n for n in facts.sparks[host].neighbors))
    rs = failures(ring4, facts, ("cabling.lldp", "spark02", l1), ("cabling.lldp", "spark04", l3))
    for r in rs:  # one exchange of two plugs fixes both cables
        assert r.hint == "swap the cables back, or change the topology", r.hint
        assert "are swapped at" in r.message, r.message


# --- stale LLDP entries (fabric.neighbors marks them; the check never judges them) -----------

def _after_undone_swap(star4: Intent, star_facts: Facts, marked: bool) -> Facts:
    """spark02's and spark03's cables were swapped and put back: each Spark still lists the
    lane it saw during the swap (an older entry lldpd keeps until its TTL) next to the lane
    it is on again; `marked`: the collector flagged the leftovers stale."""
    facts = star_facts
    for host, other in (("spark02", "qsfp56-dd-3-1"), ("spark03", "qsfp56-dd-2-1")):
        now = facts.sparks[host].neighbors
        left = tuple(dataclasses.replace(n, port_id=other, age_s=30.0, stale=marked)
                     for n in now)
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(n, age_s=1.0) for n in now) + left)
    return facts


def test_stale_entries_of_an_undone_swap_are_not_judged(star4: Intent,
                                                         star_facts: Facts) -> None:
    from validators.cabling import check_lldp

    facts = _after_undone_swap(star4, star_facts, marked=True)
    rs = [r for r in check_lldp(star4, facts) if r.link]
    assert {r.status for r in rs} == {"pass"}, [r.message for r in rs]
    # unmarked, the same leftovers would read as a miscabling: the marking is what saves it
    unmarked = _after_undone_swap(star4, star_facts, marked=False)
    assert any(r.status == "fail" for r in check_lldp(star4, unmarked))


def test_lldpd_leftovers_as_judged_after_collection(star4: Intent, star_facts: Facts) -> None:
    """`judge_lldpd` on the undone swap (the lanes changed 5 s ago; every Spark entry about
    the switch was learned before): the Sparks' ends say nothing, the switch's ends confirm:
    pass."""
    from fabric.neighbors import judge_lldpd
    from validators.cabling import check_lldp

    facts = _after_undone_swap(star4, star_facts, marked=False)
    assert facts.switch is not None
    lanes = {name: dataclasses.replace(lane, link_change_age_s=5.0)
             for name, lane in facts.switch.lanes.items()}
    facts = judge_lldpd(star4, dataclasses.replace(
        facts, switch=dataclasses.replace(facts.switch, lanes=lanes)), None)
    assert all(n.stale for h in ("spark02", "spark03") for n in facts.sparks[h].neighbors)
    rs = [r for r in check_lldp(star4, facts) if r.link]
    assert {r.status for r in rs} == {"pass"}, [r.message for r in rs]


def test_only_stale_entries_are_an_error_with_their_age_and_never_claim_a_cable(
        star4: Intent, star_facts: Facts) -> None:
    from validators.cabling import check_lldp

    assert star_facts.switch is not None
    link = link_id(star4, "spark02")
    sw = dataclasses.replace(star_facts.switch, neighbors=tuple(
        n for n in star_facts.switch.neighbors if n.local_port != "qsfp56-dd-2-1"))
    facts = dataclasses.replace(star_facts, switch=sw)
    facts = builder.replace_spark(facts, "spark02", neighbors=tuple(
        dataclasses.replace(n, port_id="qsfp56-dd-3-1", age_s=37.0, stale=True)
        for n in facts.sparks["spark02"].neighbors))
    [r] = [r for r in check_lldp(star4, facts) if r.link == link]
    assert r.status == "error" and "stale" in r.message and "37 s old" in r.message
    assert "cabled to" not in r.message and r.actual == "unverified" and r.hint
    assert r.host == "spark02"


def test_a_silent_end_is_no_evidence_and_an_unread_end_is_left_to_host_reachable(
        star4: Intent, star_facts: Facts) -> None:
    """Nothing heard on spark02's lane or twins, though both speak LLDP: an error the gate
    refuses; with spark02 unreadable the row is on spark02, so validate folds it into that
    host's one `host.reachable` row."""
    from fabric.validate import fold_unreachable
    from validators.cabling import check_lldp

    assert star_facts.switch is not None
    link = link_id(star4, "spark02")
    sw = dataclasses.replace(star_facts.switch, neighbors=tuple(
        n for n in star_facts.switch.neighbors if n.local_port != "qsfp56-dd-2-1"))
    facts = builder.replace_spark(dataclasses.replace(star_facts, switch=sw), "spark02",
                                  neighbors=())
    [r] = [r for r in check_lldp(star4, facts) if r.link == link]
    assert r.status == "error" and "no LLDP neighbour" in r.message, r.message
    sparks = {h: sf for h, sf in facts.sparks.items() if h != "spark02"}
    unread = dataclasses.replace(facts, sparks=sparks, errors={"spark02": "ssh refused"})
    rows = [r for r in check_lldp(star4, unread) if r.link == link or r.host == "spark02"]
    assert rows and all(r.host == "spark02" and r.status == "error" for r in rows)
    folded = fold_unreachable(rows, unread.errors)
    assert [r.check for r in folded] == ["host.reachable"]


def test_a_fresh_swap_still_fails(star4: Intent, star_facts: Facts) -> None:
    """During a swap the youngest entry is the swapped lane: judged, and it fails."""
    from validators.cabling import check_lldp

    facts = star_facts
    for host, other in (("spark02", "qsfp56-dd-3-1"), ("spark03", "qsfp56-dd-2-1")):
        now = facts.sparks[host].neighbors
        facts = builder.replace_spark(facts, host, neighbors=tuple(
            dataclasses.replace(n, age_s=300.0, stale=True) for n in now) + tuple(
            dataclasses.replace(n, port_id=other, age_s=2.0) for n in now))
    bad = {r.link for r in check_lldp(star4, facts) if r.status == "fail"}
    assert bad == {link_id(star4, "spark02"), link_id(star4, "spark03")}
