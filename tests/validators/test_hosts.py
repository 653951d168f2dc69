"""version, time, forward, switch, qos, nccl."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts, NcclFact, QosFact, TimeFact
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id
from validators import run_checks


def test_version_odd_one_out(ring4: Intent, ring_facts: Facts) -> None:
    v = dataclasses.replace(ring_facts.sparks["spark03"].versions, nccl="2.21.5")
    facts = builder.replace_spark(ring_facts, "spark03", versions=v)
    [r] = failures(ring4, facts, ("version.consistent", "spark03", None))
    assert (r.expected, r.actual) == ("2.27.7", "2.21.5") and "NCCL" in r.message


def test_clock_offset(star4: Intent, star_facts: Facts) -> None:
    facts = builder.replace_spark(star_facts, "spark02", time=TimeFact("chrony", True, 0.02))
    [r] = failures(star4, facts, ("time.offset", "spark02", None))
    assert r.expected == star4.profile.time_offset_max_s


def test_forward_drop_on_ring(ring4: Intent, ring_facts: Facts) -> None:
    facts = builder.replace_spark(ring_facts, "spark02", forward_policy="DROP")
    [r] = failures(ring4, facts, ("forward.policy", "spark02", None))
    assert "iptables -P FORWARD ACCEPT" in r.hint and "Docker" in r.hint


def test_forward_drop_on_star_is_fine(star4: Intent, star_facts: Facts) -> None:
    facts = builder.replace_spark(star_facts, "spark02", forward_policy="DROP")
    failures(star4, facts)


def test_lane_outside_the_hw_bridge(star4: Intent, star_facts: Facts) -> None:
    assert star_facts.switch is not None
    facts = builder.replace_lane(star_facts, "qsfp56-dd-3-1", bridge=None, hw_offload=None)
    bridges = tuple(dataclasses.replace(b, ports=tuple(p for p in b.ports
                                                       if p != "qsfp56-dd-3-1"))
                    for b in star_facts.switch.bridges)
    assert facts.switch is not None
    facts = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch,
                                                                  bridges=bridges))
    [r] = failures(star4, facts, ("switch.bridge", "crs804", link_id(star4, "spark03")))
    assert r.hint == "/interface/bridge/port add bridge=bridge interface=qsfp56-dd-3-1 hw=yes"


def test_lane_without_hw_offload(star4: Intent, star_facts: Facts) -> None:
    facts = builder.replace_lane(star_facts, "qsfp56-dd-1-1", hw_offload=False)
    [r] = failures(star4, facts, ("switch.bridge", "crs804", link_id(star4, "spark01")))
    assert "hw=yes" in r.hint and "CPU" in r.message


def test_qos_inconsistent(ring4: Intent, ring_facts: Facts) -> None:
    facts = ring_facts
    odd = ring4.interfaces("spark04")[0]
    for h in ring4.sparks:
        qos = {p.netdev: QosFact(p.netdev, "dscp", (3,)) for p in ring4.interfaces(h.name)}
        if h.name == "spark04":
            qos[odd.netdev] = QosFact(odd.netdev, "pcp", ())
        facts = builder.replace_spark(facts, h.name, qos=qos)
    [r] = failures(ring4, facts, ("qos.consistent", "spark04", odd.link_id))
    assert "--trust dscp --pfc 0,0,0,1,0,0,0,0" in r.hint


def test_nccl_skips_without_results_and_judges_with(star4: Intent, star_facts: Facts) -> None:
    [skip] = [r for r in run_checks(star4, star_facts, {"nccl"})]
    assert skip.status == "skip" and "nccl-tests" in skip.message
    runs = (NcclFact("all_gather_perf", ("spark01", "spark02"), 3.1),)
    [r] = failures(star4, dataclasses.replace(star_facts, nccl=runs), ("nccl.busbw", None, None))
    assert (r.expected, r.actual) == (15, 3.1)


def test_no_rdma_devices_skips_gids_with_reason(star4: Intent, star_facts: Facts) -> None:
    facts = builder.replace_spark(star_facts, "spark02", rdma={}, gids=())
    failures(star4, facts)
    skips = [r for r in run_checks(star4, facts, {"gid"}) if r.status == "skip"]
    assert skips and all(r.host == "spark02" and "no RDMA devices" in r.message for r in skips)


def test_rdma_free_profile_skips_gids() -> None:
    from pathlib import Path

    it = builder.intent(str(Path(__file__).parents[1] / "fixtures/validators/ring4-veth.yaml"))
    rs = run_checks(it, builder.healthy(it), {"gid"})
    assert {r.status for r in rs} == {"skip"} and "no RDMA" in rs[0].message


def test_missing_gid_for_the_address(ring4: Intent, ring_facts: Facts) -> None:
    plan = ring4.interfaces("spark01")[3]
    gids = tuple(g for g in ring_facts.sparks["spark01"].gids
                 if not (g.rdma == plan.rdma and g.ipv4))
    facts = builder.replace_spark(ring_facts, "spark01", gids=gids)
    [r] = failures(ring4, facts, ("gid.present", "spark01", plan.link_id))
    assert plan.rdma in r.message and str(plan.address.ip) in r.message
