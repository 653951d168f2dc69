"""Bandwidth test duration and iperf3 offered load are profile data (profiles.yaml), not code."""

from __future__ import annotations

import ast
from pathlib import Path

from fabric.intent.profiles import get_profile

PROBES = Path(__file__).parents[2] / "fabric" / "probes"


def test_profiles_carry_bandwidth_duration_and_rate() -> None:
    veth, cx7 = get_profile("veth"), get_profile("cx7-200g")
    assert (veth.bandwidth_test_s, veth.iperf3_rate_per_twin) == (2, "500M")
    assert (cx7.bandwidth_test_s, cx7.iperf3_rate_per_twin) == (10, None)


def test_no_profile_name_keyed_table_in_probe_code() -> None:
    for path in PROBES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in ("veth", "cx7-200g"):
                raise AssertionError(f"{path.name}:{node.lineno} names profile {node.value!r}")
