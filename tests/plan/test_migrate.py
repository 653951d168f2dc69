"""Migration plans: golden runbooks (FABRIC_REGEN_GOLDEN=1 refreshes) and runbook rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.plan.migrate import plan_migration
from fabric.plan.model import Plan
from fabric.plan.runbook import to_json, to_markdown
from tests.conftest import run_cli

GOLDEN = Path(__file__).parent / "golden"
PAIRS = [("ring4", "star4"), ("star4", "star8"), ("ring4", "star8"), ("star8", "star16")]
#: Pairs whose every node moves alone (star8 -> star16 re-modes ports that carry two Sparks).
ONE_AT_A_TIME = PAIRS[:3]
FAMILIES = {"link", "mtu", "addr", "route", "gid", "cabling", "bw", "version", "time",
            "forward", "switch", "qos", "nccl"}


def _plan(src: str, dst: str) -> Plan:
    return plan_migration(load_intent(src), load_intent(dst))


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("FABRIC_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with FABRIC_REGEN_GOLDEN=1"
    assert text == path.read_text()


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_golden_markdown_and_json(src: str, dst: str) -> None:
    plan = _plan(src, dst)
    _golden(f"{src}-{dst}.md", to_markdown(plan))
    _golden(f"{src}-{dst}.json", to_json(plan))


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_every_step_has_gate_families_and_rollback(src: str, dst: str) -> None:
    plan = _plan(src, dst)
    for step in plan.steps[:-1]:
        assert step.gate.families and set(step.gate.families) <= FAMILIES, step.title
        assert f"--only {','.join(step.gate.families)}" in step.gate.command
        assert step.rollback, step.title
    phases = [s.phase for s in plan.steps]
    assert phases[0] == "precheck" and phases[-1] == "final"


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_final_gate_runs_every_check(src: str, dst: str) -> None:
    """`fabric gate` opens only on a report that ran every check, so the last step's
    validation has no `--only` (issue 16: a partial report keeps the gate shut)."""
    final = _plan(src, dst).steps[-1]
    assert final.gate.full and "--only" not in final.gate.command
    assert final.gate.command == f"fabric validate -t {dst}"


@pytest.mark.parametrize(("src", "dst"), ONE_AT_A_TIME)
def test_one_node_down_at_a_time(src: str, dst: str) -> None:
    plan = _plan(src, dst)
    assert plan.max_down == 1
    for step in plan.steps:
        assert not set(step.down) & set(step.serving)


def test_switch_prepared_before_any_downtime() -> None:
    plan = _plan("ring4", "star8")
    first_down = next(s.number for s in plan.steps if s.down)
    prep = next(s for s in plan.steps if s.phase == "switch-prep")
    assert prep.number < first_down and not prep.down
    assert any("qsfp56-dd-1-5 auto-negotiation=no speed=200G-baseCR4" in c
               for c in prep.switch_commands)


def test_ring4_star8_cable_by_cable() -> None:
    plan = _plan("ring4", "star8")
    dst = load_intent("star8")
    plugged = {c.to_port for s in plan.steps for c in s.cables if c.action == "plug"}
    for link in dst.links:
        spark = link.a if link.a.host.startswith("spark") else link.b
        assert str(spark) in plugged, link.id
    removed = {c.cable for s in plan.steps for c in s.cables if c.action == "remove"}
    assert len(removed) == 4  # the four ring DACs go to the shelf
    env = {e.name: e for s in plan.steps for e in s.env}
    assert env["NCCL_ALGO"].before == "Ring" and env["NCCL_ALGO"].after is None


def test_ring4_star4_reuses_ring_dacs_with_from_and_to_ports() -> None:
    plan = _plan("ring4", "star4")
    moves = [c for s in plan.steps for c in s.cables if c.action == "move"]
    assert moves[0].from_port == "spark02:p1" and moves[0].to_port == "crs804:qsfp56-dd-1-1"
    step = next(s for s in plan.steps if s.title.startswith("Move spark01"))
    old = {a.netdev: a for a in step.addresses}
    assert old["enp1s0f0np0"].after == "10.210.0.1/24"
    assert old["enp1s0f1np1"].after is None  # p1 twins leave the fabric


def test_star4_star8_keeps_addresses_and_bounces_nobody() -> None:
    plan = _plan("star4", "star8")
    src, dst = load_intent("star4"), load_intent("star8")
    for host in ("spark01", "spark02", "spark03", "spark04"):
        assert ({i.netdev: i.address for i in src.interfaces(host)}
                == {i.netdev: i.address for i in dst.interfaces(host)})
    for step in plan.steps:
        assert not step.bounced
        assert all(a.kept for a in step.addresses if a.before is not None)
    assert any("addresses kept" in n for n in plan.notes)


def test_port_group_restart_bounces_neighbours() -> None:
    plan = _plan("star8", "star4")  # port 1 goes back to 1x200G with spark01 still on it?
    bounced = {n for s in plan.steps for n in s.bounced}
    for step in plan.steps:
        if step.bounced:
            assert set(step.bounced) <= set(step.down)
            assert "port group restart" in " ".join(step.actions)
    assert isinstance(bounced, set)


def test_cli_plan_json_and_draw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "plan.svg"
    code, out, err = run_cli(["plan", "ring4", "star4", "--format", "json", "--draw",
                              str(svg)], capsys)
    assert code == 0, err
    assert json.loads(out)["schema"] == "fabric.plan/1"
    text = svg.read_text()
    assert "BEFORE: ring4" in text and "AFTER: star4" in text


def test_cli_plan_markdown_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "r.md"
    code, _, err = run_cli(["plan", "star4", "star8", "-o", str(out_file)], capsys)
    assert code == 0, err
    assert out_file.read_text().startswith("# Migration runbook: star4 → star8")


def test_star8_to_star16_bounces_only_a_port_group_and_says_what_each_node_loses(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Re-moding a 400G port from 2x200G to 4x100G restarts its lanes: the other Spark on
    that port goes down with the one that moves, never more. Every node's bandwidth halves,
    and the runbook says so beside the TP and DP predictions."""
    plan = _plan("star8", "star16")
    assert plan.max_down == 2
    src = load_intent("star8")
    for step in plan.steps:
        if len(step.down) == 2:
            assert len({_port_of(src, h) for h in step.down}) == 1, step.title
    assert plan.added == tuple(f"spark{n:02d}" for n in range(9, 17))
    assert (plan.capacity.needed, plan.capacity.available, plan.capacity.gbps) == (16, 16, 100)
    assert plan.prediction[0].startswith("bandwidth per node: 200G → 100G (halves) on spark01")
    assert "8 ranks, 19.9 ms per 256 MiB all-reduce" in plan.prediction[1]
    assert "→ 16 ranks, 42.7 ms" in plan.prediction[1]
    assert plan.prediction[2].startswith("or keep TP at 8 ranks and add DP: 2 replicas of TP8")
    code, out, _ = run_cli(["plan", "star8", "star16"], capsys)
    assert code == 0 and "## What each node gets" in out


def _port_of(intent: Intent, host: str) -> str:
    """The 400G port (qsfp56-dd-N) that a Spark's switch lane belongs to."""
    assert intent.switch is not None
    (link,) = intent.links_of(host)
    return link.end_of(intent.switch.host).port.rsplit("-", 1)[0]
