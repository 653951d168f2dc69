"""What-if answers for the site, the over-capacity refusal, metrics and synthetic fabrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.intent.build import load_intent
from fabric.plan.graph import from_intent
from fabric.plan.metrics import analyse, parse_size
from fabric.plan.synth import build, design, plan_and_analyse
from fabric.plan.whatif import WhatIf, fail_target, spofs
from tests.conftest import run_cli

STAR9 = Path(__file__).parent / "data" / "star9.yaml"


def _whatif(topology: str, target: str, tp: int = 4) -> WhatIf:
    intent = load_intent(topology)
    return fail_target(from_intent(intent), intent, target, tp)


def test_losing_ups_b_on_ring4() -> None:
    r = _whatif("ring4", "UPS-B")
    assert r.lost_hosts == ("spark03", "spark04")
    assert r.sparks_left == ("spark01", "spark02") and r.connected
    assert not r.tp_possible and r.dp_replicas == 2 and r.spof
    assert r.bisection_gbps == 200


def test_losing_ups_b_on_star8_keeps_one_tp4_group() -> None:
    r = _whatif("star8", "UPS-B")
    assert r.tp_groups == 1 and r.dp_replicas == 4 and not r.spof
    assert r.bisection_gbps == 400 and r.bisection_before_gbps == 800


def test_losing_a_port_group_drops_both_breakout_legs() -> None:
    r = _whatif("star8", "crs804:qsfp56-dd-2")
    assert r.kind == "port-group"
    assert r.lost_links == ("spark03:p0--crs804:qsfp56-dd-2-1",
                            "spark04:p0--crs804:qsfp56-dd-2-5")
    assert not r.connected and r.tp_groups == 1
    star4 = _whatif("star4", "crs804:qsfp56-dd-2")
    assert not star4.tp_possible


@pytest.mark.parametrize("target", ["spark01:p0--spark02:p1", "spark02:p1"])
def test_losing_a_ring_cable(target: str) -> None:
    r = _whatif("ring4", target)
    assert r.kind == "cable" and r.lost_links == ("spark01:p0--spark02:p1",)
    assert r.connected and r.tp_possible and r.dp_replicas == 4
    assert r.bisection_gbps == 200 and r.bisection_before_gbps == 400
    assert any("forwarding" in n for n in r.notes)


def test_losing_the_switch() -> None:
    r = _whatif("star4", "crs804")
    assert r.kind == "switch" and not r.connected and not r.tp_possible
    assert r.dp_replicas == 4 and r.bisection_gbps == 0


def test_ups_c_takes_the_gateway() -> None:
    r = _whatif("star8", "UPS-C")
    assert "dl360" in r.lost_hosts and r.dp_replicas == 0 and r.spof


def test_spofs_of_star8() -> None:
    intent = load_intent("star8")
    assert [r.target for r in spofs(from_intent(intent), intent, 4)] == ["crs804", "UPS-C"]


def test_cli_whatif(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["whatif", "ring4", "--fail", "UPS-B"], capsys)
    assert code == 0 and "TP4 group: cannot be formed" in out
    code, out, _ = run_cli(["whatif", "star4", "--all", "--tp", "2"], capsys)
    assert code == 0 and "| crs804 | switch |" in out
    code, _, err = run_cli(["whatif", "star4", "--fail", "nonesuch"], capsys)
    assert code == 2 and "UPS group" in err


def test_over_capacity_plan_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["plan", "star8", str(STAR9)], capsys)
    assert code == 2 and out == ""
    text = " ".join(err.split())
    assert "over capacity: 9 Sparks" in text and "has 8" in text
    assert "4x100G" in text and "second crs804-4ddq-hrm" in text


def test_metrics_per_topology() -> None:
    ring, star8 = (analyse(from_intent(load_intent(t)), 2**30) for t in ("ring4", "star8"))
    assert ring.hops == {1: 4, 2: 2} and ring.bisection_gbps == 400
    assert star8.hops == {2: 28} and star8.bisection_gbps == 800
    assert star8.ports_needed == star8.ports_available == 8
    assert 0 < ring.allreduce_ms < star8.allreduce_ms


def test_parse_size() -> None:
    assert parse_size("512M") == 512 * 2**20 and parse_size("1024") == 1024


def test_synthetic_leaf_spine() -> None:
    bom = design(64, 3.0)
    assert bom.hosts_per_leaf == 6 and bom.uplinks_per_leaf == 1 and bom.leaves == 11
    fab = build(bom)
    assert len(fab.sparks) == 64
    m = analyse(fab, 2**28)
    assert m.max_hops == 4 and sum(m.hops.values()) == 64 * 63 // 2
    out = plan_and_analyse(128, 1.0, 2**28)
    assert out["metrics"]["bisection_gbps"] == 64 * 200
