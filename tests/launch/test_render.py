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
from fabric.launch.spec import build_spec, rank_order, with_extra_env, with_ip_addresses

GOLDEN = Path(__file__).parent / "golden"
CASES = [(t, e) for t in ("ring4", "star4", "star8") for e in ("sglang", "vllm", "dp")]
#: Container launches with the seeds' preset (and, for dp, the sglang-router front).
CONTAINER_CASES = [("star4", "sglang"), ("ring4", "vllm"), ("star4", "vllm"), ("ring4", "dp")]
#: The management names of the inventory, as a resolver on the rendering machine sees them.
#: An `--engine-arg` per engine, after the preset's.
EXTRA = {"sglang": ["--mem-fraction-static", "0.8"], "dp": ["--mem-fraction-static", "0.8"],
         "vllm": ["--gpu-memory-utilization=0.8"]}
FAKE_DNS = {f"spark{i:02d}.mgmt.studio.lan": f"192.0.2.{i}" for i in range(1, 17)}


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


@pytest.mark.parametrize("topology", ["ring4", "star4", "star8", "star16"])
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


@pytest.mark.parametrize("topology", ["ring4", "star4", "star8", "star16"])
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


#: NVIDIA's ring settings (dgx-spark-playbooks' multi-sparks cluster setup; sparkrun likewise).
RING_NCCL = {"NCCL_IB_SUBNET_AWARE_ROUTING": "1", "NCCL_IB_MERGE_NICS": "0",
             "NCCL_NET_PLUGIN": "none"}


def node_scripts(files: dict[str, str]) -> dict[str, str]:
    """The per-node launch scripts (not the data-parallel front)."""
    return {n: t for n, t in files.items() if n.startswith("spark") and n.endswith(".sh")}


def comment_above(script: str, line: str) -> str:
    lines = script.splitlines()
    above = lines[lines.index(line) - 1]
    assert above.startswith("# "), (line, above)
    return above


@pytest.mark.parametrize("engine", ["sglang", "vllm", "dp"])
@pytest.mark.parametrize("container", [False, True])
def test_ring_launches_carry_nvidias_ring_nccl_settings(engine: str, container: bool) -> None:
    for name, script in node_scripts(rendered("ring4", engine, container)).items():
        env = env_of(script)
        assert {k: env.get(k) for k in RING_NCCL} == RING_NCCL, name
        why = {k: comment_above(script, f"export {k}={v}") for k, v in RING_NCCL.items()}
        assert "rocep1s0f0" in why["NCCL_IB_MERGE_NICS"]
        assert "rocep1s0f1" in why["NCCL_IB_MERGE_NICS"]
        assert "plugin" in why["NCCL_NET_PLUGIN"]
        assert "Subnet-aware routing" in why["NCCL_IB_SUBNET_AWARE_ROUTING"]
        if container:
            flat = " ".join(script.replace("\\\n", " ").split())
            assert all(f"-e {k} " in flat for k in RING_NCCL), name


@pytest.mark.parametrize("topology", ["star4", "star8"])
def test_stars_get_subnet_aware_routing_and_no_ring_settings(topology: str) -> None:
    for engine in ("sglang", "vllm", "dp"):
        for name, script in node_scripts(rendered(topology, engine)).items():
            env = env_of(script)
            assert env["NCCL_IB_SUBNET_AWARE_ROUTING"] == "1", name
            assert "NCCL_IB_MERGE_NICS" not in env and "NCCL_NET_PLUGIN" not in env, name
            why = comment_above(script, "export NCCL_IB_SUBNET_AWARE_ROUTING=1")
            assert "switch" in why


def test_ring_nccl_settings_yield_to_env_overrides() -> None:
    spec = with_extra_env(build_spec(load_intent("ring4"), gid_index=3),
                          {"NCCL_IB_MERGE_NICS": "1", "NCCL_NET_PLUGIN": "/opt/net.so"})
    script = render(spec, "sglang", model="/m")["spark01-sglang.sh"]
    env = env_of(script)
    assert env["NCCL_IB_MERGE_NICS"] == "1" and env["NCCL_NET_PLUGIN"] == "/opt/net.so"
    assert script.count("NCCL_IB_MERGE_NICS=") == 1 and script.count("NCCL_NET_PLUGIN=") == 1
    assert ("# overridden on the command line (--env); the fabric's value was 0\n"
            "export NCCL_IB_MERGE_NICS=1\n") in script
    assert "the fabric's value was none\nexport NCCL_NET_PLUGIN=/opt/net.so\n" in script
    assert env["NCCL_IB_SUBNET_AWARE_ROUTING"] == "1"


FAKE_PYTHON = """#!/bin/sh
# a node's (or an image's) python3: Ray importable only with HAS_RAY; `-m pip` is logged
case "$1" in
  -c) [ -n "${HAS_RAY:-}" ] && exit 0; echo "ModuleNotFoundError: No module named 'ray'" >&2
      exit 1;;
  -m) shift; echo "$*" >> "$PIP_LOG"; exit 0;;
esac
exit 2
"""


def ray_step(script: str) -> str:
    """The rendered lines that run before this node's `ray start` (after the env)."""
    body = script.split("set -euo pipefail\n")[-1]
    start = re.search(r"^(exec )?ray start", body, flags=re.M)
    assert start, script
    return "\n".join(line for line in body[:start.start()].splitlines()
                     if not line.startswith(("export ", "unset ", "exec docker", "  ")))


def run_step(step: str, tmp_path: Path, has_ray: bool) -> tuple[int, str, str]:
    """Run `step` with a fake python3 first on the PATH: (exit status, stderr, pip's log)."""
    import subprocess

    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "python3").write_text(FAKE_PYTHON)
    (fake / "python3").chmod(0o755)
    log = tmp_path / "pip.log"
    log.unlink(missing_ok=True)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "PIP_LOG": str(log)} | (
        {"HAS_RAY": "1"} if has_ray else {})
    proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + step], env=env, text=True,
                          capture_output=True, check=False)
    return proc.returncode, proc.stderr, log.read_text() if log.exists() else ""


@pytest.mark.parametrize("topology", ["ring4", "star4"])
def test_vllm_in_a_container_installs_ray_before_ray_start_when_the_image_lacks_it(
        topology: str, tmp_path: Path) -> None:
    for name, script in node_scripts(rendered(topology, "vllm", container=True)).items():
        step = ray_step(script)
        assert "import ray" in step, name
        rc, err, pip = run_step(step, tmp_path, has_ray=False)
        assert rc == 0, err
        assert pip == "pip install --no-cache-dir ray[default]\n", name
        assert "registry.example/vllm:test has no Ray" in err
        assert "pip install" in err and "--container" in err  # what it does, how to skip it
        assert run_step(step, tmp_path, has_ray=True) == (0, "", "")


def test_bare_metal_vllm_stops_before_ray_start_without_ray(tmp_path: Path) -> None:
    for name, script in node_scripts(rendered("star4", "vllm")).items():
        host = name.split("-")[0]
        rc, err, pip = run_step(ray_step(script), tmp_path, has_ray=False)
        assert rc == 1 and pip == "", name  # nothing installed on the node itself
        assert f"no Ray for python3 on {host}" in err
        assert "pip install 'ray[default]'" in err and "--container default" in err
        assert run_step(ray_step(script), tmp_path, has_ray=True) == (0, "", "")


def test_engines_yaml_names_the_ray_the_vllm_image_lacks() -> None:
    from fabric.launch.engines import DATA, load_engines

    vllm = load_engines().engines["vllm"]
    assert vllm.ray == "ray[default]" and vllm.modules == ("vllm",)
    assert "Ray included" not in DATA.read_text()
    assert load_engines().engines["sglang"].ray is None


@pytest.mark.parametrize("topology", ["ring4", "star4"])
@pytest.mark.parametrize("container", [False, True])
def test_ray_memory_monitor_is_off_on_every_vllm_node(topology: str, container: bool) -> None:
    for name, script in node_scripts(rendered(topology, "vllm", container)).items():
        assert env_of(script)["RAY_memory_monitor_refresh_ms"] == "0", name
        why = comment_above(script, "export RAY_memory_monitor_refresh_ms=0")
        assert "unified memory" in why and "kills" in why
        # exported before `ray start` and the engine; in a container, passed to it with -e
        start = re.search(r"^(exec )?ray start", script, flags=re.M)
        assert start and script.index("export RAY_memory_monitor_refresh_ms=0") < start.start()
        if container:
            assert "-e RAY_memory_monitor_refresh_ms" in script
    for engine in ("sglang", "dp"):
        assert not any("RAY_memory_monitor" in s for s in rendered(topology, engine).values())


def test_ray_memory_monitor_yields_to_an_env_override() -> None:
    spec = with_extra_env(with_ip_addresses(build_spec(load_intent("star4"), gid_index=3),
                                            resolve), {"RAY_memory_monitor_refresh_ms": "250"})
    script = render(spec, "vllm", model="/m")["spark02-vllm.sh"]
    assert env_of(script)["RAY_memory_monitor_refresh_ms"] == "250"
    assert script.count("RAY_memory_monitor_refresh_ms=") == 1


def directives(conf: str) -> dict[str, str]:
    """nginx `name args;` lines (the last of a repeated name), comments dropped."""
    found = re.findall(r"^\s*([a-z_]+)\s+([^;{#\n]*);", conf, flags=re.M)
    return {name: args.strip() for name, args in found}


def test_nginx_retries_only_a_request_that_never_reached_a_server() -> None:
    """With the request body unbuffered (`proxy_request_buffering off`) nginx never resends a
    request it has begun to send (ngx_http_upstream_next: `request_sent &&
    request_body_no_buffering`), whatever the method: only `error` and `timeout` before the
    request went out can move it to the next server, so the config lists just those, and no
    `non_idempotent` (a generation a server accepted is never run twice)."""
    conf = rendered("star8", "dp")["nginx-fabric-dp.conf"]
    d = directives(conf)
    assert d["proxy_request_buffering"] == "off"
    assert d["proxy_next_upstream"].split() == ["error", "timeout"]
    assert "non_idempotent" not in d["proxy_next_upstream"]
    lines = conf.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("proxy_next_upstream "))
    first = at
    while lines[first - 1].strip().startswith("#"):
        first -= 1
    comment = " ".join(ln.strip(" #") for ln in lines[first:at])
    for words in ("POST", "never reached", "run twice", "proxy_connect_timeout"):
        assert words in comment, (words, comment)
    # what the head says of failover holds: a node is taken out for failed connections
    head = " ".join(ln.strip(" #") for ln in lines[:4])
    assert "connect" in head


HF_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
HF_CACHE = "${HF_HOME:-$HOME/.cache/huggingface}"


def test_a_hugging_face_model_id_is_recognised_and_a_path_is_not() -> None:
    from fabric.launch.render import is_hf_model_id

    for hf in (HF_MODEL, "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3.1", "org/name_v1.5"):
        assert is_hf_model_id(hf), hf
    for local in ("/models/DeepSeek-V4.1-Flash", "./models/m", "models/m/x", "~/m", "../a/b",
                  "a//b", "org/", "/org/name"):
        assert not is_hf_model_id(local), local


@pytest.mark.parametrize(("topology", "engine"), [("star4", "sglang"), ("ring4", "vllm"),
                                                  ("star4", "dp")])
def test_a_hugging_face_model_mounts_the_node_cache_and_passes_the_token_by_name(
        topology: str, engine: str) -> None:
    spec = build_spec(load_intent(topology), gid_index=3)
    if engine == "vllm":
        spec = with_ip_addresses(spec, resolve)
    files = render(spec, engine, model=HF_MODEL, container=f"registry.example/{engine}:test")
    for name, script in node_scripts(files).items():
        flat = " ".join(script.replace("\\\n", " ").split())
        run = flat[flat.index("exec docker run"):]
        assert f'-v "{HF_CACHE}:/root/.cache/huggingface"' in run, name
        assert "-e HF_HOME=/root/.cache/huggingface" in run and "-e HF_TOKEN " in run, name
        assert "HF_TOKEN=" not in script  # by name only: docker takes it from the node's env
        assert f"-v {HF_MODEL}" not in run and ":ro" not in run  # no mount of an id
        mkdir = f'mkdir -p "{HF_CACHE}"'
        assert mkdir in script and script.index(mkdir) < script.index("exec docker run")
        assert "Hugging Face" in comment_above(script, mkdir)
        assert f"{HF_MODEL} read-only" not in script
    # bare metal: the engine finds the node's own cache and token; nothing to add
    bare = render(spec, engine, model=HF_MODEL)
    assert not any("huggingface" in s or "HF_TOKEN" in s for s in bare.values())


def test_a_local_model_keeps_its_read_only_mount_and_gets_no_hf_cache() -> None:
    for script in node_scripts(rendered("star4", "vllm", container=True)).values():
        assert "-v /models/DeepSeek-V4.1-Flash:/models/DeepSeek-V4.1-Flash:ro" in script
        assert "huggingface" not in script and "HF_TOKEN" not in script
