"""`fabric validate --plan`: golden plans (FABRIC_REGEN_GOLDEN=1 refreshes), printed without
connecting to any host; bad input exits 2; the plan is what the run does."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabric.intent.model import Intent
from fabric.probes.facts_burst import FactsBurstProbes
from fabric.target import Target, files_target
from fabric.validate import plan_validation
from tests.conftest import INVENTORY, run_cli

GOLDEN = Path(__file__).parent / "golden"
#: (golden name, arguments after `fabric validate --plan -i INVENTORY`)
CASES = [("ring4", ["-t", "ring4"]), ("star4", ["-t", "star4"]), ("star8", ["-t", "star8"]),
         ("star4-only-mtu-counters", ["-t", "star4", "--only", "mtu,counters"])]


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("FABRIC_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with FABRIC_REGEN_GOLDEN=1"
    assert text == path.read_text()


@pytest.fixture(autouse=True)
def _no_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan never opens Nornir: making one fails the test."""
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("--plan connected")

    monkeypatch.setattr("fabric.validate.make_nornir", refuse)
    monkeypatch.setattr("fabric.collect.gather.make_nornir", refuse)


@pytest.mark.parametrize(("name", "args"), CASES)
def test_golden_plans(name: str, args: list[str], capsys: pytest.CaptureFixture[str],
                      tmp_path: Path) -> None:
    out_json = tmp_path / "plan.json"
    code, out, _ = run_cli(["validate", "--plan", "-i", str(INVENTORY), *args,
                            "--json", str(out_json)], capsys)
    assert code == 0
    _golden(f"plan-{name}.txt", out)
    _golden(f"plan-{name}.json", out_json.read_text())
    assert json.loads(out_json.read_text())["schema"] == "fabric.validate-plan/1"


def test_json_on_stdout_puts_the_text_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["validate", "--plan", "-i", str(INVENTORY), "-t", "star4",
                              "--json", "-"], capsys)
    assert code == 0
    assert json.loads(out)["topology"] == "star4"
    assert "burst 1: connect, counters before" in err


@pytest.mark.parametrize("args", [["--only", "nope"], ["--only", "mtu", "--junit", "x.xml"],
                                  ["--hosts", "spark99"]])
def test_bad_input_exits_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["validate", "--plan", "-i", str(INVENTORY), "-t", "star4", *args],
                           capsys)
    assert code == 2 and "Traceback" not in err


def test_a_lab_is_planned_from_its_own_target(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def lab(name: str) -> Target:
        assert name == "L"
        return files_target("ring4", INVENTORY)

    monkeypatch.setattr("fabric.lab.lifecycle.registry.lab_target", lab)
    code, out, _ = run_cli(["validate", "--plan", "--lab", "L", "--only", "link"], capsys)
    assert code == 0 and out.startswith("validation plan: ring4")
    monkeypatch.undo()
    code, _, _ = run_cli(["validate", "--plan", "--lab", "nosuch-lab-x"], capsys)
    assert code == 2


def test_hosts_narrow_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["validate", "--plan", "-i", str(INVENTORY), "-t", "star8",
                            "--hosts", "spark01,spark02", "--only", "mtu"], capsys)
    assert code == 0
    assert "hosts: crs804, spark01, spark02\n" in out and "spark03" not in out


def test_the_plan_is_what_runs(intents: dict[str, Intent]) -> None:
    """The plan's connection work is the facts burst's, and its options the families' needs:
    mtu pings, bw bandwidth, nccl nccl-tests, counters a window over pings and bandwidth."""
    target = files_target("star4", INVENTORY)
    for only, want in (({"mtu"}, (True, False, False, False)),
                       ({"bw"}, (False, True, False, False)),
                       ({"nccl"}, (False, False, True, False)),
                       ({"counters"}, (True, True, False, True)),
                       ({"link", "addr"}, (False, False, False, False)),
                       (None, (True, True, True, True))):
        plan, _ = plan_validation(target, only)
        o = plan.options
        assert (o.ping, o.bandwidth, o.nccl, o.counters) == want, only
    plan, _ = plan_validation(target, None)
    sparks = [h.name for h in intents["star4"].sparks]
    same = FactsBurstProbes(target.intent, plan.options, sparks).work()
    assert {h: [s.name for s in v] for h, v in plan.work().scripts.items()} == {
        h: [s.name for s in v] for h, v in same.scripts.items()}
