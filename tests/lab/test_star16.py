"""star16 on the lab: sixteen Sparks on one CRS804 whose four 400G ports break out 4x100G.
Built, pushed and validated as an operator does it: every lane forced to 100G-baseCR2, every
check that the lab can judge passes, the gate opens and a launch renders sixteen ranks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import Labs, fabric, failing, validate

pytestmark = pytest.mark.lab

LAB = "t-star16"


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Any:
    with labs.private("star16", LAB, switch_prepared=True) as info:
        yield info


def test_star16_pushes_validates_opens_the_gate_and_launches_sixteen_ranks(
        lab: LabInfo, state_dir: Path, tmp_path: Path) -> None:
    push = fabric("push", "--lab", LAB, "--apply", state_dir=state_dir)
    assert push.returncode == 0, push.stderr[-3000:]
    assert "on spark01, spark02" in push.stderr and "spark16, crs804 and verified" in push.stderr
    code, report, err = validate(LAB, tmp_path, "--duration", "1", state_dir=state_dir)
    assert code == 0 and not failing(report), json.dumps(failing(report), indent=1) + err[-300:]
    judged = {(r["check"], r["link"]) for r in report["results"] if r["status"] == "pass"}
    links = {f"spark{n:02d}:p0--crs804:qsfp56-dd-{(n - 1) // 4 + 1}-{(n - 1) % 4 * 2 + 1}"
             for n in range(1, 17)}
    for check in ("link.speed", "cabling.lldp", "bw.link"):
        assert {link for c, link in judged if c == check} == links, check
    gate = fabric("gate", "--lab", LAB, state_dir=state_dir)
    assert gate.returncode == 0, gate.stderr[-2000:]
    out = tmp_path / "launch"
    launch = fabric("launch", "sglang", "--lab", LAB, "--out", str(out), state_dir=state_dir)
    assert launch.returncode == 0, launch.stderr[-2000:]
    scripts = sorted(p.name for p in out.glob("*-sglang.sh"))
    assert scripts == [f"spark{n:02d}-sglang.sh" for n in range(1, 17)]
    text = (out / "spark16-sglang.sh").read_text().replace("\\\n", " ")
    assert "--tp-size 16 " in text and "--node-rank 15 " in text
