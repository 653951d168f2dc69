"""Rendered launch scripts: golden files per topology and engine, plus the flags and env
the brief requires. Refresh goldens only with FABRIC_REGEN_GOLDEN=1."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fabric.intent.build import load_intent
from fabric.launch.plan import build_plan, rank_order
from fabric.launch.render import render

GOLDEN = Path(__file__).parent / "golden"
CASES = [(t, e) for t in ("ring4", "star4", "star8") for e in ("sglang", "vllm", "dp")]


def rendered(topology: str, engine: str) -> dict[str, str]:
    plan = build_plan(load_intent(topology), gid_index=3)
    return render(plan, engine, model="/models/DeepSeek-V4.1-Flash")


@pytest.mark.parametrize(("topology", "engine"), CASES)
def test_golden(topology: str, engine: str) -> None:
    files = rendered(topology, engine)
    folder = GOLDEN / topology / engine
    if os.environ.get("FABRIC_REGEN_GOLDEN") == "1":
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*"):
            old.unlink()
        for name, text in files.items():
            (folder / name).write_text(text)
    expected = {p.name: p.read_text() for p in folder.glob("*")}
    assert files == expected


def env_of(script: str) -> dict[str, str]:
    return dict(re.findall(r"^export (\w+)=(\S+)$", script, flags=re.M))


@pytest.mark.parametrize("topology", ["ring4", "star4", "star8"])
def test_sglang_flags_follow_the_topology(topology: str) -> None:
    intent = load_intent(topology)
    files = rendered(topology, "sglang")
    n = len(intent.sparks)
    order = rank_order(intent, "spark01")
    for rank, host in enumerate(order):
        script = files[f"{host}-sglang.sh"]
        assert f"--tp-size {n} " in script.replace("\\\n", " ")
        assert f"--nnodes {n} " in script.replace("\\\n", " ")
        assert f"--node-rank {rank} " in script.replace("\\\n", " ")
        env = env_of(script)
        assert env["NCCL_IB_GID_INDEX"] == "3"
        hcas = env["NCCL_IB_HCA"].lstrip("=").split(",")
        assert {"rocep1s0f0", "roceP2p1s0f0"} <= set(hcas)  # both twins of p0
        assert ("NCCL_ALGO" in env) == (intent.kind == "ring")
    entry = files["spark01-sglang.sh"]
    if intent.kind == "star":
        assert "--dist-init-addr 10.210.0.1:20000" in entry
        assert env_of(entry)["GLOO_SOCKET_IFNAME"] == "enp1s0f0np0"
    else:
        assert env_of(entry)["GLOO_SOCKET_IFNAME"] == "enP7s7"
    assert "--host 0.0.0.0" in entry


def test_ring_rank_order_keeps_neighbours_adjacent() -> None:
    intent = load_intent("ring4")
    assert rank_order(intent, "spark01") == ["spark01", "spark02", "spark03", "spark04"]
    assert rank_order(intent, "spark03") == ["spark03", "spark02", "spark01", "spark04"]


def test_every_variable_is_explained() -> None:
    for topology, engine in CASES:
        for name, text in rendered(topology, engine).items():
            lines = text.splitlines()
            for i, line in enumerate(lines):
                if line.startswith(("export ", "unset ")):
                    assert lines[i - 1].startswith("# "), (topology, engine, name, line)


def test_vllm_head_and_workers() -> None:
    files = rendered("star4", "vllm")
    head = files["spark01-vllm.sh"]
    assert "ray start --head --node-ip-address=10.210.0.1" in head
    assert "--tensor-parallel-size 4" in head and "--pipeline-parallel-size 1" in head
    assert "ray start --block --address=10.210.0.1:6379 --node-ip-address=10.210.0.3" in (
        files["spark03-vllm.sh"])


def test_dp_renders_a_least_conn_balancer() -> None:
    files = rendered("star8", "dp")
    conf = files["nginx-fabric-dp.conf"]
    assert "least_conn;" in conf and conf.count("server spark0") == 8
    assert "max_fails=3" in conf
