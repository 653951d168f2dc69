"""`--lab NAME` works on every command that takes an inventory: the lab's own topology copy
(198.19.0.0/16 fabric addresses, veth profile) and its generated inventory."""

from __future__ import annotations

import json

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from tests.conftest import run_cli

pytestmark = pytest.mark.lab


def test_topo_show_json_uses_the_lab_copy(star4: LabInfo,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["topo", "show", "--lab", star4.name, "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["profile"] == "veth"
    addrs = [r["a"]["address"] for link in data["links"] for r in link["rails"]]
    assert addrs and all(a.startswith("198.19.") for a in addrs)


def test_topo_check_whatif_and_metrics_take_a_lab(star4: LabInfo,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["topo", "check", "--lab", star4.name], capsys)
    assert code == 0 and "ok star4" in err
    code, out, err = run_cli(["whatif", "--lab", star4.name, "--fail", "crs804",
                              "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)
    code, out, err = run_cli(["plan", "metrics", "--lab", star4.name], capsys)
    assert code == 0, err
    assert json.loads(out)


def test_lab_and_topology_together_is_a_usage_error(star4: LabInfo,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["topo", "check", "star4", "--lab", star4.name], capsys)
    assert code == 2 and "--lab already names a topology" in " ".join(err.split())
