"""Topology `qos: lossy | lossless`: default, the intent hash, the launch environment."""

from __future__ import annotations

from pathlib import Path

from fabric.intent.build import load_intent
from fabric.intent.platforms import roce_qos
from fabric.launch.spec import build_spec
from tests.conftest import INVENTORY, TOPOLOGIES


def with_qos(tmp_path: Path, base: str, qos: str) -> Path:
    path = tmp_path / f"{base}-{qos}.yaml"
    path.write_text((TOPOLOGIES / f"{base}.yaml").read_text().replace(
        "mtu: 9000\n", f"mtu: 9000\nqos: {qos}\n", 1))
    return path


def test_lossy_is_the_default_and_keeps_the_intent_hash(tmp_path: Path) -> None:
    star4 = load_intent("star4")
    assert star4.qos == "lossy" and not star4.lossless
    explicit = load_intent(with_qos(tmp_path, "star4", "lossy"), INVENTORY)
    assert explicit.intent_hash == star4.intent_hash
    assert "qos" not in star4.to_dict()


def test_lossless_changes_the_intent_hash(tmp_path: Path) -> None:
    lossless = load_intent(with_qos(tmp_path, "star4", "lossless"), INVENTORY)
    assert lossless.lossless and lossless.to_dict()["qos"] == "lossless"
    assert lossless.intent_hash != load_intent("star4").intent_hash
    assert load_intent("star4-lossless").lossless


def test_recipe_numbers() -> None:
    r = roce_qos()
    assert (r.dscp, r.priority, r.cnp_dscp, r.cnp_traffic_class) == (26, 3, 48, 6)
    assert r.pfc_bits == "0,0,0,1,0,0,0,0" and r.traffic_class_byte == 106


def test_launch_env_gets_nccl_ib_tc_only_when_lossless() -> None:
    lossy = {e.name: e for e in build_spec(load_intent("star4")).env}
    lossless = {e.name: e for e in build_spec(load_intent("star4-lossless")).env}
    assert "NCCL_IB_TC" not in lossy
    assert lossless["NCCL_IB_TC"].value == "106"
    assert "cma_roce_tos" in lossless["NCCL_IB_TC"].why
    assert set(lossless) - set(lossy) == {"NCCL_IB_TC"}
