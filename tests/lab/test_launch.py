"""Launch on the lab twin: the gate, and a real torch.distributed rehearsal (gloo on CPU)
across the star4 lab's Sparks with the launch's env, ranks and rendezvous address."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fabric.lab.registry import LabInfo

pytestmark = pytest.mark.lab

FABRIC = [sys.executable, "-m", "fabric"]


def fabric(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FABRIC, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def validated(lab_factory: Callable[[str, str], LabInfo]) -> LabInfo:
    """star4 lab, pushed and validated (the gate's report is written by validate)."""
    info = lab_factory("star4", "t-launch")
    push = fabric("push", "--lab", info.name, "--apply")
    assert push.returncode == 0, push.stderr[-3000:]
    val = fabric("validate", "--lab", info.name, "--only", "link,mtu,addr,route")
    assert val.returncode == 0, val.stderr[-3000:]
    return info


def test_rehearsal_passes_on_the_lab(validated: LabInfo, tmp_path: Path) -> None:
    proc = fabric("launch", "rehearse", "--lab", validated.name, "-b", "256K", "-e", "1M",
                  "-n", "3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "all_reduce_perf: average bus bandwidth" in proc.stderr
    assert "all_gather_perf: average bus bandwidth" in proc.stderr
    # rank order and hosts come from the lab's own hostnames (UTS namespaces)
    for rank, host in enumerate(["spark01", "spark02", "spark03", "spark04"]):
        assert f"#  Rank  {rank} Group  0 Pid" in proc.stdout
        assert f"on {host} device" in proc.stdout


def test_wrong_gloo_interface_fails_fast_with_hint(validated: LabInfo) -> None:
    proc = fabric("launch", "rehearse", "--lab", validated.name, "--env",
                  "GLOO_SOCKET_IFNAME=eth0", "--timeout", "20")
    assert proc.returncode == 1
    assert "GLOO_SOCKET_IFNAME=eth0 names eth0, which does not exist" in proc.stderr
    assert "HINT" in proc.stderr


def test_render_writes_scripts_after_a_pass(validated: LabInfo, tmp_path: Path) -> None:
    proc = fabric("launch", "sglang", "--lab", validated.name, "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    script = (tmp_path / "spark03-sglang.sh").read_text()
    assert "--node-rank 2" in script and "--dist-init-addr 198.19.0.1:20000" in script
