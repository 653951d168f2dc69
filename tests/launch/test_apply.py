"""Units of `launch --apply` / `launch stop`: health targets per engine, `--env` rendering,
the launch record, and the rehearsal's per-rank env (one GPU per node)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.launch.apply import health_urls, probe
from fabric.launch.rehearse import rank_env
from fabric.launch.render import render
from fabric.launch.spec import build_spec, with_extra_env
from fabric.launch.state import (
    LaunchRecord,
    launch_state_path,
    load_record,
    new_run_id,
    remote_run_dir,
    save_record,
)
from fabric.launch.stop_launch_process import _pids


def test_tensor_parallel_health_is_the_entry_only() -> None:
    spec = build_spec(load_intent("star4"), entry="spark02", gid_index=3)
    for engine in ("sglang", "vllm"):
        files = render(spec, engine, model="/m", api_port=31000)
        assert health_urls(spec, engine, files, 31000) == {
            "http://spark02.mgmt.studio.lan:31000/health": "spark02"}


def test_dp_health_follows_the_rendered_nginx_targets() -> None:
    spec = build_spec(load_intent("star8"), gid_index=3)
    files = render(spec, "dp", model="/m")
    urls = health_urls(spec, "dp", files, 30000)
    assert list(urls.values()) == [f"spark0{i}" for i in range(1, 9)]
    assert all(re.fullmatch(r"http://spark0\d\.mgmt\.studio\.lan:30000/health", u) for u in urls)
    # a server in the config that is not a node is still checked (and named as no node)
    files["nginx-fabric-dp.conf"] += "upstream x {\n    server 10.9.9.9:30000;\n}\n"
    assert health_urls(spec, "dp", files, 30000)["http://10.9.9.9:30000/health"] is None


def test_probe_is_false_when_nothing_listens() -> None:
    assert probe("http://127.0.0.1:9/health", timeout=0.5) is False


def test_extra_env_is_rendered_with_a_reason() -> None:
    spec = with_extra_env(build_spec(load_intent("star4"), gid_index=3),
                          {"PYTHONPATH": "/opt/engine", "NCCL_IB_GID_INDEX": "5"})
    script = render(spec, "sglang", model="/m")["spark01-sglang.sh"]
    assert "# set on the command line (--env)\nexport PYTHONPATH=/opt/engine\n" in script
    assert ("# overridden on the command line (--env); the fabric's value was 3\n"
            "export NCCL_IB_GID_INDEX=5\n") in script
    assert script.count("NCCL_IB_GID_INDEX=") == 1


def test_launch_record_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path))
    assert launch_state_path("t-launch") == tmp_path / "labs" / "t-launch" / "launch.json"
    run_id = new_run_id()
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{4}", run_id)
    record = LaunchRecord(run_id, "dp", "star4", "abc", "t-launch", True,
                          "2026-11-30T00:00:00+00:00", remote_run_dir(run_id),
                          {"spark01": 10, "spark02": 11})
    path = launch_state_path("t-launch")
    assert load_record(path) is None
    save_record(record, path)
    assert load_record(path) == record
    path.write_text("{")
    with pytest.raises(InputError, match="unreadable launch record"):
        load_record(path)


def test_stop_output_markers() -> None:
    out = "@@FOUND 12 13 \nnoise\n@@LEFT \n"
    assert _pids(out, "@@FOUND") == (12, 13)
    assert _pids(out, "@@LEFT") == ()


def test_rehearsal_env_one_gpu_per_node() -> None:
    spec = build_spec(load_intent("star4"), gid_index=3)
    nccl = [rank_env(spec, r.rank, 29500, backend="nccl") for r in spec.ranks]
    for rank, env in enumerate(nccl):
        assert env["RANK"] == str(rank) and env["WORLD_SIZE"] == "4"
        assert env["LOCAL_RANK"] == "0" and env["LOCAL_WORLD_SIZE"] == "1"
        assert env["MASTER_ADDR"] == "10.210.0.1" and env["MASTER_PORT"] == "29500"
        assert env["NCCL_IB_HCA"] == "=rocep1s0f0,roceP2p1s0f0"
        assert env["NCCL_IB_GID_INDEX"] == "3"
        assert "CUDA_VISIBLE_DEVICES" not in env  # the node's own GPU stays visible
    gloo = rank_env(spec, 1, 29500)
    assert gloo["CUDA_VISIBLE_DEVICES"] == "" and gloo["LOCAL_RANK"] == "0"
    pinned = rank_env(spec, 0, 29500, {"CUDA_VISIBLE_DEVICES": "1"}, backend="nccl")
    assert pinned["CUDA_VISIBLE_DEVICES"] == "1" and pinned["LOCAL_RANK"] == "0"


def test_rehearsal_env_without_a_gid_leaves_it_unset() -> None:
    spec = build_spec(load_intent("star4"))
    assert "NCCL_IB_GID_INDEX" not in rank_env(spec, 0, 29500, backend="nccl")


def test_exit_codes_and_failure_kinds() -> None:
    from netmiko.exceptions import NetmikoTimeoutException

    from fabric.cli.common import resolve_target
    from fabric.launch.apply import ApplyOutcome, NodeOutcome, _failure
    from fabric.remote.shell import RemoteCommandFailed

    target = resolve_target(None, None, "star4")
    assert _failure(target, RemoteCommandFailed("spark02: mkdir failed"))[0] == "failed"
    kind, why = _failure(target, NetmikoTimeoutException("TCP connection to device failed"))
    assert kind == "unreachable" and "TCP connection failed" in why
    record = LaunchRecord("r", "sglang", "star4", "h", None, False, "t", "/d", {"spark01": 1})
    nodes = {"spark01": NodeOutcome("spark01", "healthy", 1)}
    assert ApplyOutcome(record, nodes, {}, 1.0, True).exit_code == 0
    assert ApplyOutcome(record, nodes, {}, 1.0, False).exit_code == 1
    nodes["spark02"] = NodeOutcome("spark02", "unreachable", reason=why)
    assert ApplyOutcome(record, nodes, {}, 1.0, False).exit_code == 3


def test_image_verdicts_stop_only_what_the_script_cannot_mend_and_name_the_fix() -> None:
    from fabric.launch.apply import image_verdict

    img = "nvcr.io/nvidia/vllm:26.05.post1-py3"
    assert image_verdict("vllm", img, "spark01", ()) == image_verdict("vllm", None, "x", ())
    ok = image_verdict("vllm", img, "spark01", ())
    assert (ok.problem, ok.note) == ("", "")
    # no Ray, but pip: the script installs it at each start; said, not stopped for
    v = image_verdict("vllm", img, "spark01", ("ray",))
    assert v.problem == "" and v.note.startswith(f"image {img} has no Ray: ")
    assert "pip install 'ray[default]'" in v.note and "--container" in v.note
    v = image_verdict("vllm", img, "spark01", ("ray", "pip"))
    assert v.problem.startswith(f"image {img} has no Ray and no pip to install it: ")
    v = image_verdict("vllm", img, "spark01", ("vllm",))
    assert v.problem.startswith(f"image {img} has no vllm: ")
    assert "--container default" in v.problem
    v = image_verdict("vllm", None, "spark02", ("ray", "pip"))
    assert v.problem == ("no Ray for python3 on spark02: pip install 'ray[default]' on every "
                         "node, or launch in a container (--container default)")
    assert image_verdict("vllm", None, "spark02", ("vllm",)).problem.startswith(
        "python3 on spark02 has no vllm: ")
