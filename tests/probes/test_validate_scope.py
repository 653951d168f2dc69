"""`fabric validate --hosts`: the scope (hosts, cables, switch lanes), unknown hosts, and every
gate command the migration planner emits parsed by the real validate CLI parser."""

from __future__ import annotations

import json
import shlex

import pytest
import typer
import typer.main

from fabric.cli.validate import register
from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from fabric.validate import host_scope, selected_families
from tests.conftest import INVENTORY, run_cli

S1 = "spark01:p0--crs804:qsfp56-dd-1-1"


def test_star_spark_scope_is_its_cable_and_the_switch(intents: dict[str, Intent]) -> None:
    scope = host_scope(intents["star8"], ["spark01"])
    assert scope.links == {S1} and scope.collect == ("crs804", "spark01")
    four = host_scope(intents["star8"], ["spark05", "spark06", "spark07", "spark08"])
    assert len(four.links) == 4 and "crs804" in four.collect


def test_switch_alone_has_no_cable(intents: dict[str, Intent]) -> None:
    scope = host_scope(intents["star8"], ["crs804"])
    assert scope.links == frozenset() and scope.collect == ("crs804",)


def test_ring_scope_is_the_cables_among_the_hosts(intents: dict[str, Intent]) -> None:
    scope = host_scope(intents["ring4"], ["spark01", "spark02"])
    assert scope.links == {"spark01:p0--spark02:p1"}
    assert scope.collect == ("spark01", "spark02")


def test_results_outside_the_scope_are_dropped(intents: dict[str, Intent]) -> None:
    scope = host_scope(intents["star4"], ["spark01"])
    keep = [CheckResult("link.twin_up", "pass", "spark01", S1),
            CheckResult("link.switch_lane", "pass", "crs804", S1),
            CheckResult("gid.index", "pass"), CheckResult("time.offset", "pass", "spark01")]
    drop = [CheckResult("link.twin_up", "fail", "spark02", "spark02:p0--crs804:qsfp56-dd-2-1"),
            CheckResult("time.offset", "error", "spark03"),
            CheckResult("switch.bridge", "fail", "crs804")]
    assert [r for r in keep + drop if scope.covers(r)] == keep


def test_unknown_host_is_named(intents: dict[str, Intent]) -> None:
    with pytest.raises(InputError, match="spark09") as exc:
        host_scope(intents["star4"], ["spark01", "spark09"])
    assert "known: crs804, spark01" in str(exc.value)


def test_cli_unknown_host_exits_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["validate", "-i", str(INVENTORY), "-t", "star4", "--hosts",
                            "spark01,nosuch"], capsys)
    assert code == 2 and "nosuch" in err and "Traceback" not in err


def _gates(source: str, target: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = run_cli(["plan", source, target, "--format", "json"], capsys)
    assert code == 0, err
    return [s["gate"]["command"] for s in json.loads(out)["steps"]]


def _validate_command() -> typer.core.TyperCommand:
    """The real `fabric validate` command (registered exactly as the CLI registers it)."""
    one = typer.Typer()
    register(one)
    command = typer.main.get_command(one)
    assert isinstance(command, typer.core.TyperCommand)
    return command


@pytest.mark.parametrize("source,target", [("ring4", "star8"), ("ring4", "star4"),
                                           ("star4", "star8")])
def test_every_planner_gate_is_a_valid_validate_command(
        source: str, target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Parse each gate with validate's own click parser (no run): an unknown flag, family or
    host fails here."""
    gates = _gates(source, target, capsys)
    assert any("--hosts" in g for g in gates)
    command = _validate_command()
    for gate in gates:
        argv = shlex.split(gate)
        assert argv[:2] == ["fabric", "validate"], gate
        with command.make_context("validate", argv[2:]) as ctx:
            params = ctx.params
        only = {f for f in (params["only"] or "").split(",") if f}
        assert selected_families(only or None), gate
        if params["hosts"]:
            intent = load_intent(params["topology"], INVENTORY)
            host_scope(intent, params["hosts"].split(","))


def test_the_parser_check_rejects_a_flag_validate_lacks() -> None:
    with pytest.raises(Exception, match="No such option: --nodes"):
        _validate_command().make_context("validate", ["-t", "star4", "--nodes", "spark01"])


def test_scoped_ping_matrix_stays_among_the_hosts(intents: dict[str, Intent]) -> None:
    from fabric.probes.ping import ping_probes

    pair = {"spark01", "spark02"}
    probes = ping_probes(intents["star4"], sources=pair, targets=pair)
    assert probes and {(p.src_host, p.dst_host) for p in probes} == {
        ("spark01", "spark02"), ("spark02", "spark01")}
