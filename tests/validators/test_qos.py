"""qos.consistent: both ends of each cable agree on the lossless class (lossless topology), or
nothing is judged (lossy); counters.pause on PFC lanes."""

from __future__ import annotations

import dataclasses

import pytest

from fabric.facts import Facts, QosFact, SwitchQosFact, SwitchQosPort
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id
from tests.validators.test_counters import ETHERNET, bump
from tests.validators.test_counters import healthy as with_counters
from validators import run_checks

LANE3 = "qsfp56-dd-3-1"
MAP = tuple((p, tuple(range(8 * p + 7, 8 * p - 1, -1))) for p in range(8))


@pytest.fixture(scope="module")
def lossless() -> Intent:
    return builder.intent("star4-lossless")


def switch_qos(it: Intent, **port: str) -> SwitchQosFact:
    assert it.switch is not None
    ports = {lp.name: SwitchQosPort(lp.name, port.get("trust_l3", "keep"),
                                    port.get("pfc", "pfc-tc3"),
                                    (3,) if port.get("pfc", "pfc-tc3") != "disabled" else ())
             for lp in it.switch.lanes if lp.cabled_to}
    return SwitchQosFact(offloaded=True, dscp_classes=((26, 3), (48, 6)), ecn_classes=(3,),
                         strict_classes=(6, 7), ports=ports, lldp_dcbx=True)


def lossless_facts(it: Intent) -> Facts:
    facts = builder.healthy(it)
    for h in it.sparks:
        qos = {p.netdev: QosFact(p.netdev, "dscp", (3,), MAP) for p in it.interfaces(h.name)}
        facts = builder.replace_spark(facts, h.name, qos=qos)
    assert facts.switch is not None
    return dataclasses.replace(facts, switch=dataclasses.replace(facts.switch,
                                                                 qos=switch_qos(it)))


def with_port(facts: Facts, lane: str, **changes: object) -> Facts:
    assert facts.switch is not None and facts.switch.qos is not None
    q = facts.switch.qos
    ports = {**q.ports, lane: dataclasses.replace(q.ports[lane], **changes)}  # type: ignore[arg-type]
    return dataclasses.replace(facts, switch=dataclasses.replace(
        facts.switch, qos=dataclasses.replace(q, ports=ports)))


def qos_results(it: Intent, facts: Facts) -> list[tuple[str, str | None, str]]:
    return [(r.status, r.host, r.message) for r in run_checks(it, facts, {"qos"})]


def test_lossy_topology_is_skipped_with_the_reason(star4: Intent, star_facts: Facts) -> None:
    [(status, _, message)] = qos_results(star4, star_facts)
    assert status == "skip" and "qos: lossy" in message
    pcp = star_facts  # the NICs' defaults (trust pcp, no PFC) are not lossless settings
    for h in star4.sparks:
        pcp = builder.replace_spark(pcp, h.name, qos={p.netdev: QosFact(p.netdev, "pcp", ())
                                                      for p in star4.interfaces(h.name)})
    assert [s for s, _, _ in qos_results(star4, pcp)] == ["skip"]


def test_pfc_on_the_twins_of_a_lossy_star_fails_each_twin(star4: Intent,
                                                         star_facts: Facts) -> None:
    """A lossy star leaves the switch's lanes without PFC, so twins running PFC (left by hand
    or by an earlier lossless push) are half a lossless class: PFC on the NIC replaces global
    pause, and nothing on the switch pauses the class. Each such twin fails, named, with both
    ways out; twins that only trust DSCP pass."""
    facts = star_facts
    for h in star4.sparks:
        facts = builder.replace_spark(facts, h.name, qos={
            p.netdev: QosFact(p.netdev, "dscp", (3,) if h.name == "spark02" else ())
            for p in star4.interfaces(h.name)})
    results = run_checks(star4, facts, {"qos"})
    failed = [r for r in results if r.status == "fail"]
    assert {r.host for r in failed} == {"spark02"} and len(failed) == 2
    assert all("half a lossless class" in r.message and "--pfc 0,0,0,0,0,0,0,0" in (r.hint or "")
               and "qos: lossless" in (r.hint or "") for r in failed)
    assert {r.status for r in results if r.host != "spark02"} == {"pass"}


def test_lossless_both_ends_agree(lossless: Intent) -> None:
    facts = lossless_facts(lossless)
    got = qos_results(lossless, facts)
    assert {s for s, _, _ in got} == {"pass"}
    assert len(got) == 1 + 8  # the switch-wide settings, then each twin with its lane
    assert any("crs804 qsfp56-dd-3-1 and spark03 enp1s0f0np0 (p0 twin A) agree" in m
               for _, _, m in got)
    failures(lossless, facts)  # nothing else fails on this fabric either


def test_a_lane_flipped_to_untrusted_fails_naming_lane_and_twins(lossless: Intent) -> None:
    facts = with_port(lossless_facts(lossless), LANE3, trust_l3="ignore")
    bad = failures(lossless, facts, ("qos.consistent", "crs804", link_id(lossless, "spark03")))
    assert len(bad) == 2  # both twins ride the lane
    for r in bad:
        assert "crs804 qsfp56-dd-3-1 (trust-l3 ignore" in r.message
        assert "spark03 en" in r.message and "disagree on DSCP trust" in r.message
        assert f"/interface/ethernet/switch/qos/port set {LANE3} trust-l3=keep" in r.hint
    assert {"spark03 enp1s0f0np0", "spark03 enP2p1s0f0np0"} == {
        next(w for w in ("spark03 enp1s0f0np0", "spark03 enP2p1s0f0np0") if w in r.message)
        for r in bad}


def test_a_twin_without_pfc_fails_on_the_spark(lossless: Intent) -> None:
    facts = lossless_facts(lossless)
    nd = lossless.interfaces("spark02")[1].netdev
    qos = dict(facts.sparks["spark02"].qos)
    qos[nd] = QosFact(nd, "dscp", (), MAP)
    facts = builder.replace_spark(facts, "spark02", qos=qos)
    [r] = failures(lossless, facts, ("qos.consistent", "spark02", link_id(lossless, "spark02")))
    assert "disagree on PFC priorities" in r.message and nd in r.message
    assert r.hint.startswith(f"mlnx_qos -i {nd} --trust dscp --pfc 0,0,0,1,0,0,0,0")


def test_dscp_26_elsewhere_on_the_switch_fails(lossless: Intent) -> None:
    facts = lossless_facts(lossless)
    assert facts.switch is not None and facts.switch.qos is not None
    moved = dataclasses.replace(facts.switch.qos, dscp_classes=((48, 6),))
    facts = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, qos=moved))
    got = [r for r in run_checks(lossless, facts, {"qos"}) if r.status == "fail"]
    assert len(got) == 8 and all("where DSCP 26 lands" in r.message for r in got)


def test_switch_wide_settings_are_judged(lossless: Intent) -> None:
    facts = lossless_facts(lossless)
    assert facts.switch is not None and facts.switch.qos is not None
    off = dataclasses.replace(facts.switch.qos, lldp_dcbx=False, ecn_classes=())
    facts = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, qos=off))
    [r] = failures(lossless, facts, ("qos.consistent", "crs804", None))
    assert "no ECN marking on traffic class 3" in r.message and "lldp-dcbx is off" in r.message


def test_switch_qos_missing_or_unreadable_fails(lossless: Intent) -> None:
    facts = lossless_facts(lossless)
    assert facts.switch is not None
    none = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, qos=None))
    [r] = failures(lossless, none, ("qos.consistent", "crs804", None))
    assert "was not collected" in r.message
    old = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, qos=SwitchQosFact(
        offloaded=None, error="RouterOS 7.12.1: /interface/ethernet/switch/qos/port: no such "
        "command prefix")))
    [r] = failures(lossless, old, ("qos.consistent", "crs804", None))
    assert "no such command prefix" in r.message and "7.15" in r.hint


def test_a_twin_without_mlnx_qos_fails(lossless: Intent) -> None:
    facts = builder.replace_spark(lossless_facts(lossless), "spark04", qos={},
                                  missing=("mlnx_qos",))
    bad = failures(lossless, facts, ("qos.consistent", "spark04", link_id(lossless, "spark04")))
    assert len(bad) == 2 and all("mlnx_qos is not installed" in r.message for r in bad)


def test_pause_on_a_pfc_lane_is_expected_not_an_alarm(lossless: Intent) -> None:
    facts = dataclasses.replace(with_counters(lossless), switch=lossless_facts(lossless).switch)
    facts = bump(facts, "crs804", "qsfp56-dd-2-1", ETHERNET, "rx-pause", 5)
    got = run_checks(lossless, facts, {"counters.pause"})
    lane = [r for r in got if r.host == "crs804" and r.link == link_id(lossless, "spark02")]
    assert [r.status for r in lane] == ["skip"]
    assert "PFC on traffic class 3" in lane[0].message
    no_pfc = with_port(facts, "qsfp56-dd-2-1", pfc="disabled", pfc_classes=())  # judged
    lane = [r for r in run_checks(lossless, no_pfc, {"counters.pause"})
            if r.host == "crs804" and r.link == link_id(lossless, "spark02")]
    assert [r.status for r in lane] == ["warn"] and "rx-pause +5" in lane[0].message
