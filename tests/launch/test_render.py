"""Rendered launch scripts: golden files per topology and engine, plus the flags and env
the brief requires. Refresh goldens only with FABRIC_REGEN_GOLDEN=1."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

import pytest

from fabric.intent.build import load_intent
from fabric.launch.engines import engine_args
from fabric.launch.render import render
from fabric.launch.spec import build_spec, rank_order, with_ip_addresses

GOLDEN = Path(__file__).parent / "golden"
CASES = [(t, e) for t in ("ring4", "star4", "star8") for e in ("sglang", "vllm", "dp")]
#: Container launches with the seeds' preset (and, for dp, the sglang-router front).
CONTAINER_CASES = [("star4", "sglang"), ("ring4", "vllm"), ("star4", "vllm"), ("ring4", "dp")]
#: The management names of the inventory, as a resolver on the rendering machine sees them.
#: An `--engine-arg` per engine, after the preset's.
EXTRA = {"sglang": ["--mem-fraction-static", "0.8"], "dp": ["--mem-fraction-static", "0.8"],
         "vllm": ["--gpu-memory-utilization=0.8"]}
FAKE_DNS = {f"spark0{i}.mgmt.studio.lan": f"192.0.2.{i}" for i in range(1, 9)}


def resolve(name: str) -> str:
    if name not in FAKE_DNS:
        raise OSError(f"[Errno -2] Name or service not known: {name}")
    return FAKE_DNS[name]


def rendered(topology: str, engine: str, container: bool = False) -> dict[str, str]:
    spec = build_spec(load_intent(topology), gid_index=3)
    if engine == "vllm":
        spec = with_ip_addresses(spec, resolve)
    if not container:
        return render(spec, engine, model="/models/DeepSeek-V4.1-Flash")
    return render(spec, engine, model="/models/DeepSeek-V4.1-Flash",
                  container=f"registry.example/{engine}:test",
                  engine_args=engine_args(engine, "deepseek-v4.1-flash", EXTRA[engine]).args,
                  front="sglang-router" if engine == "dp" else "nginx")


@pytest.mark.parametrize(("topology", "engine", "container"),
                         [(t, e, False) for t, e in CASES]
                         + [(t, e, True) for t, e in CONTAINER_CASES])
def test_golden(topology: str, engine: str, container: bool) -> None:
    files = rendered(topology, engine, container)
    folder = GOLDEN / topology / (f"{engine}-container" if container else engine)
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


@pytest.mark.parametrize("topology", ["ring4", "star4", "star8"])
@pytest.mark.parametrize("container", [False, True])
def test_vllm_host_ip_is_the_ray_ip_on_every_node(topology: str, container: bool) -> None:
    """VLLM_HOST_IP is set on every node, is an IP, and is the address Ray registers there
    (on the ring: the management name resolved at render time)."""
    files = rendered(topology, "vllm", container)
    for name, script in files.items():
        ip = env_of(script)["VLLM_HOST_IP"]
        assert ipaddress.IPv4Address(ip), name
        assert f"--node-ip-address={ip}" in script, name
        assert re.search(r"--address=(\d+\.){3}\d+:6379|--head", script), name
        assert "mgmt.studio.lan" not in script, name
        if container:
            assert "-e VLLM_HOST_IP" in script
    if topology == "ring4":
        assert env_of(files["spark03-vllm.sh"])["VLLM_HOST_IP"] == "192.0.2.3"


def test_vllm_refuses_a_name_that_does_not_resolve() -> None:
    from fabric.errors import InputError

    spec = build_spec(load_intent("ring4"), gid_index=3)
    with pytest.raises(InputError, match=r"spark01: its launch address 'spark01.mgmt.studio"
                       r".lan' does not resolve .*vLLM over Ray needs IP addresses"):
        with_ip_addresses(spec, lambda name: (_ for _ in ()).throw(OSError("no such name")))


@pytest.mark.parametrize("topology", ["star4", "star8"])
def test_two_rail_stars_keep_nccl_on_its_rail(topology: str) -> None:
    for engine in ("sglang", "vllm", "dp"):
        for script in rendered(topology, engine).values():
            if script.startswith("#!"):
                assert env_of(script)["NCCL_CROSS_NIC"] == "0"
    assert "NCCL_CROSS_NIC" not in rendered("ring4", "sglang")["spark01-sglang.sh"]


def test_container_command_has_what_a_spark_needs() -> None:
    files = rendered("star4", "sglang", container=True)
    for rank, host in enumerate(["spark01", "spark02", "spark03", "spark04"]):
        script = files[f"{host}-sglang.sh"]
        flat = " ".join(script.replace("\\\n", " ").split())
        run = flat[flat.index("exec docker run"):]
        for want in ("--rm --name fabric-sglang-" + host, "--network host", "--ipc host",
                     "--gpus all", "--device /dev/infiniband", "--cap-add IPC_LOCK",
                     "--ulimit memlock=-1", "--shm-size 32g",
                     "-v /models/DeepSeek-V4.1-Flash:/models/DeepSeek-V4.1-Flash:ro",
                     '--label "fabric.launch.run-id=${FABRIC_LAUNCH_RUN_ID:-manual}"',
                     "registry.example/sglang:test python3 -m sglang.launch_server",
                     f"--node-rank {rank} ",
                     "--quantization fp8 --kv-cache-dtype fp8_e4m3 --context-length 32768 "
                     "--mem-fraction-static 0.8"):
            assert want in run, (host, want)
        for name in env_of(script):
            assert f"-e {name} " in run, (host, name)


def test_dp_router_front_uses_the_real_package() -> None:
    files = rendered("ring4", "dp", container=True)
    assert "nginx-fabric-dp.conf" not in files
    router = files["sglang-router-fabric-dp.sh"]
    assert "exec python3 -m sglang_router.launch_router" in router
    flat = " ".join(router.replace("\\\n", " ").split())
    assert ("--worker-urls http://spark01.mgmt.studio.lan:30000 http://spark02.mgmt.studio.lan"
            ":30000 http://spark03.mgmt.studio.lan:30000 http://spark04.mgmt.studio.lan:30000"
            ) in flat
    assert "--health-failure-threshold 3" in flat


def test_dp_renders_a_least_conn_balancer() -> None:
    files = rendered("star8", "dp")
    conf = files["nginx-fabric-dp.conf"]
    assert "least_conn;" in conf and conf.count("server spark0") == 8
    assert conf.count("max_fails=3 fail_timeout=30s;") == 8
    for directive in ("proxy_buffering off;", "proxy_read_timeout 3600s;",
                      "proxy_connect_timeout 5s;", "proxy_next_upstream error timeout"):
        assert directive in conf
