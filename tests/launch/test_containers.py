"""`launch --apply` and `launch stop` end to end on star4 and ring4, with a fake remote: every
node's shell runs here (bash, FAKE_HOST naming the node), and TEST DOUBLES of docker, SGLang,
vLLM and Ray (tests/launch/doubles) stand in on its PATH and PYTHONPATH. The rendered scripts run
unchanged; the doubles record argv and env, so the tests see exactly what each node ran, in and
out of the "container", and that `stop` stops exactly the recorded containers (and Ray)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fabric.cli.common import resolve_target
from fabric.launch import state as launch_state
from fabric.launch.apply import LaunchMeta, apply_launch, stop_launch
from fabric.launch.engines import engine_args
from fabric.launch.render import container_name, node_env, render
from fabric.launch.spec import LaunchSpec, build_spec, with_extra_env, with_ip_addresses
from fabric.launch.state import RUN_ID_VAR, RUN_LABEL, launch_state_path, load_record
from fabric.remote import shell as push_shell
from fabric.target import Target

DOUBLES = Path(__file__).parent / "doubles"
FAKE_DNS = {f"spark0{i}.mgmt.studio.lan": f"192.0.2.{i}" for i in range(1, 9)}
MODEL = "/models/DeepSeek-V4.1-Flash"
HOSTS = ["spark01", "spark02", "spark03", "spark04"]


@dataclass
class Nodes:
    """The fake remote: where the doubles live and what they recorded per node."""

    doubles: Path
    remote: Path
    #: more of each node's login environment (the fake SSH session's)
    env: dict[str, str] = field(default_factory=dict)

    def calls(self, host: str, tool: str | None = None) -> list[dict[str, Any]]:
        path = self.doubles / "state" / host / "calls.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()] if (
            path.exists()) else []
        return [r for r in rows if tool is None or r["tool"] == tool]

    def ready_pid(self, host: str, tool: str) -> int | None:
        path = self.doubles / "state" / host / f"ready-{tool}"
        return int(path.read_text()) if path.exists() else None


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Nodes]:
    doubles = tmp_path / "doubles"
    shutil.copytree(DOUBLES, doubles)
    remote = tmp_path / "remote"
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(launch_state, "REMOTE_ROOT", str(remote))
    monkeypatch.setattr(push_shell, "session", lambda task: task.host.name)
    fake = Nodes(doubles, remote)

    def exec_script(conn: str, script: str, timeout: float, stdin: bytes = b"",
                    login: bool = False) -> tuple[int, str]:
        env = {"PATH": f"{doubles}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path),
               "FAKE_HOST": conn, "LANG": "C.UTF-8", **fake.env}
        proc = subprocess.run(["bash", "-c", script], input=stdin, env=env, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        return proc.returncode, proc.stdout.decode(errors="replace")

    monkeypatch.setattr(push_shell, "exec_script", exec_script)

    def probe(url: str, timeout: float = 2.0) -> bool:
        host = next(h for h in HOSTS if f"//{h}." in url)
        return any((pid := fake.ready_pid(host, tool)) is not None and alive(pid)
                   for tool in ("sglang", "vllm"))

    monkeypatch.setattr("fabric.launch.apply.probe", probe)
    yield fake
    for proc in Path("/proc").iterdir():  # nothing the doubles started outlives the test
        try:
            if proc.name.isdigit() and any(str(doubles).encode() in (proc / f).read_bytes()
                                           for f in ("cmdline", "environ")):
                os.kill(int(proc.name), 9)
        except OSError:
            continue


def launch_plan(topology: str, engine: str, env: dict[str, str]) -> tuple[Target, LaunchSpec]:
    target = resolve_target(None, None, topology)
    spec = with_extra_env(build_spec(target.intent, gid_index=3), env)
    if engine == "vllm":
        spec = with_ip_addresses(spec, FAKE_DNS.__getitem__)
    return target, spec


def launch(nodes: Nodes, topology: str, engine: str, container: bool,
           env: dict[str, str] | None = None, model: str = MODEL,
           ) -> tuple[Target, LaunchSpec, Any, tuple[str, ...]]:
    """Render and apply; `env`: the `--env` pairs (default: the doubles' py/ as PYTHONPATH)."""
    env = env or {"PYTHONPATH": str(nodes.doubles / "py")}
    target, spec = launch_plan(topology, engine, env)
    image = f"registry.example/{engine}:test" if container else None
    extra = {"vllm": ["--gpu-memory-utilization=0.8"]}.get(engine, ["--mem-fraction-static",
                                                                      "0.8"])
    args = engine_args(engine, "deepseek-v4.1-flash", extra).args
    files = render(spec, engine, model=model, container=image, engine_args=args)
    names = {r.host: container_name(engine, r.host) for r in spec.ranks} if image else {}
    meta = LaunchMeta(names, image, "deepseek-v4.1-flash", args, env)
    out = apply_launch(target, spec, engine, files, 30000, False, 30.0, meta=meta)
    return target, spec, out, args


def docker_run(nodes: Nodes, host: str) -> dict[str, Any]:
    """The launch's own `docker run` on `host` (the named container)."""
    runs = [c for c in nodes.calls(host, "docker") if c["argv"][:1] == ["run"]
            and "--name" in c["argv"]]
    assert len(runs) == 1, (host, runs)
    return runs[0]


def image_checks(nodes: Nodes, host: str) -> list[dict[str, Any]]:
    """The `docker run`s of `launch --apply`'s look into the image (no name, nothing kept)."""
    return [c for c in nodes.calls(host, "docker") if c["argv"][:1] == ["run"]
            and "--name" not in c["argv"]]


def expected_env(spec: LaunchSpec, host: str, engine: str) -> dict[str, str]:
    rank = next(r for r in spec.ranks if r.host == host)
    return {v.name: v.value for v in node_env(spec, rank, engine) if v.value}


@pytest.mark.parametrize("topology", ["star4", "ring4"])
@pytest.mark.parametrize("engine", ["sglang", "vllm", "dp"])
def test_container_launch_runs_the_right_command_env_and_ranks_and_stop_stops_it(
        nodes: Nodes, topology: str, engine: str) -> None:
    target, spec, out, args = launch(nodes, topology, engine, container=True)
    assert out.healthy, {h: (n.state, n.reason, n.log_tail) for h, n in out.nodes.items()}
    record = load_record(launch_state_path())
    assert record is not None and record.image == f"registry.example/{engine}:test"
    assert record.containers == {h: f"fabric-{engine}-{h}" for h in HOSTS}
    assert record.preset == "deepseek-v4.1-flash" and record.engine_args == list(args)
    rank_of = {r.host: r.rank for r in spec.ranks}
    for host in HOSTS:
        run = docker_run(nodes, host)
        argv = run["argv"]
        words = " ".join(argv)
        # the container: host network and IPC, GPUs, RDMA, memlock, shm, the model read-only
        for want in ("--network host", "--ipc host", "--gpus all", "--device /dev/infiniband",
                     "--cap-add IPC_LOCK", "--ulimit memlock=-1", "--shm-size 32g",
                     f"-v {MODEL}:{MODEL}:ro", f"--name fabric-{engine}-{host}"):
            assert want in words, (host, want)
        assert run["labels"] == {RUN_LABEL: record.run_id}
        assert run["image"] == f"registry.example/{engine}:test"
        # the validated env reached the container (and nothing of the host's login env)
        want_env = expected_env(spec, host, engine)
        assert {k: run["container_env"].get(k) for k in want_env} == want_env
        assert RUN_ID_VAR not in run["container_env"]
        assert run["env"][RUN_ID_VAR] == record.run_id  # the docker client is the launch's
        if engine == "vllm":
            ip = next(r.fabric_addr for r in spec.ranks if r.host == host)
            assert run["container_env"]["VLLM_HOST_IP"] == ip
            starts = [c["argv"] for c in nodes.calls(host, "ray") if c["argv"][0] == "start"]
            for start in (c for c in nodes.calls(host, "ray") if c["argv"][0] == "start"):
                assert start["env"]["RAY_memory_monitor_refresh_ms"] == "0"
            if host == spec.entry:
                assert starts == [["start", "--head", f"--node-ip-address={ip}", "--port=6379"]]
                (serve,) = nodes.calls(host, "vllm")
                assert serve["env"]["RAY_memory_monitor_refresh_ms"] == "0"
                assert serve["argv"][:2] == ["serve", MODEL]
                assert " ".join(serve["argv"]).endswith(
                    "--tensor-parallel-size 4 --pipeline-parallel-size 1 "
                    "--distributed-executor-backend ray --host 0.0.0.0 --port 30000 "
                    "--quantization fp8 --kv-cache-dtype int8_per_token_head "
                    "--max-model-len 32768 --gpu-memory-utilization=0.8")
                assert serve["env"]["VLLM_HOST_IP"] == ip
                assert {k: serve["env"].get(k) for k in want_env} == want_env
            else:
                assert starts == [["start", "--block", f"--address={spec.master_addr}:6379",
                                   f"--node-ip-address={ip}"]]
            if topology == "ring4":
                assert ip == f"192.0.2.{host[-1]}"
        else:
            (server,) = nodes.calls(host, "sglang")
            flat = " ".join(server["argv"])
            assert f"--model-path {MODEL}" in flat
            assert flat.endswith("--quantization fp8 --kv-cache-dtype fp8_e4m3 "
                                 "--context-length 32768 --mem-fraction-static 0.8")
            if engine == "sglang":
                assert (f"--tp-size 4 --nnodes 4 --node-rank {rank_of[host]} --dist-init-addr "
                        f"{spec.master_addr}:20000") in flat
            else:
                assert "--node-rank" not in flat and "--host 0.0.0.0 --port 30000" in flat
            assert {k: server["env"].get(k) for k in want_env} == want_env
    engines = {h: nodes.ready_pid(h, "vllm" if engine == "vllm" else "sglang") for h in HOSTS}
    clients = dict(record.pids)

    t0 = time.monotonic()
    done = stop_launch(target)
    assert done.exit_code == 0, done.errors
    assert time.monotonic() - t0 < 20
    assert done.containers == {h: (f"fabric-{engine}-{h}",) for h in HOSTS}
    for host in HOSTS:
        docker = [c["argv"] for c in nodes.calls(host, "docker") if c["argv"][0] != "run"]
        stops = [a for a in docker if a[0] == "stop"]
        assert stops == [["stop", "-t", "20", f"fabric-{engine}-{host}"]], docker
        filters = next(a for a in docker if a[0] == "ps")
        assert f"name=^fabric-{engine}-{host}$" in filters
        assert f"label={RUN_LABEL}={record.run_id}" in filters
        execs = [a for a in docker if a[0] == "exec"]
        assert execs == ([["exec", f"fabric-{engine}-{host}", "ray", "stop"]]
                         if engine == "vllm" else [])
    pids = [p for p in engines.values() if p] + list(clients.values())
    assert pids and not any(alive(p) for p in pids)
    assert load_record(launch_state_path()) is None
    assert stop_launch(target).record is None  # idempotent: nothing recorded, nothing to do


def test_a_second_stop_finds_no_container_and_stops_nothing_else(nodes: Nodes) -> None:
    """A container of the same name but another run (not ours) is left alone."""
    target, _spec, out, _ = launch(nodes, "star4", "sglang", container=True)
    assert out.healthy
    record = load_record(launch_state_path())
    assert record is not None
    # forge the record of an older run: same names, another run id
    launch_state.save_record(launch_state.LaunchRecord(
        "20200101T000000Z-0000", record.engine, record.topology, record.intent_hash, None,
        False, record.started, record.run_dir, record.pids, containers=record.containers),
        launch_state_path())
    done = stop_launch(target)
    assert done.containers == {h: () for h in HOSTS}
    assert all(not any(c["argv"][0] == "stop" for c in nodes.calls(h, "docker")) for h in HOSTS)
    assert all(alive(pid) for pid in (nodes.ready_pid(h, "sglang") for h in HOSTS) if pid)
    # the real record stops them
    launch_state.save_record(record, launch_state_path())
    assert stop_launch(target).containers == {h: (f"fabric-sglang-{h}",) for h in HOSTS}


@pytest.mark.parametrize("topology", ["star4", "ring4"])
def test_bare_metal_vllm_exports_the_ray_ip_and_stop_runs_ray_stop_everywhere(
        nodes: Nodes, topology: str) -> None:
    target, spec, out, _ = launch(nodes, topology, "vllm", container=False)
    assert out.healthy, {h: (n.state, n.reason, n.log_tail) for h, n in out.nodes.items()}
    record = load_record(launch_state_path())
    assert record is not None and record.containers == {} and record.image is None
    daemons = {}
    for host in HOSTS:
        ip = next(r.fabric_addr for r in spec.ranks if r.host == host)
        (start,) = [c for c in nodes.calls(host, "ray") if c["argv"][0] == "start"]
        assert start["env"]["VLLM_HOST_IP"] == ip and f"--node-ip-address={ip}" in start["argv"]
        assert start["env"]["RAY_memory_monitor_refresh_ms"] == "0"
        assert start["env"][RUN_ID_VAR] == record.run_id
        pids = nodes.doubles / "state" / host / "ray-pids"
        daemons[host] = [int(p) for p in pids.read_text().split()]
    # the head's Ray daemon runs in its own session: killing the launch's session misses it
    assert all(alive(p) for ps in daemons.values() for p in ps)
    done = stop_launch(target)
    assert done.exit_code == 0 and done.ray == dict.fromkeys(HOSTS, "stopped")
    for host in HOSTS:
        assert [c["argv"] for c in nodes.calls(host, "ray") if c["argv"][0] == "stop"] == [
            ["stop"]]
        assert not nodes.calls(host, "docker")
    assert not any(alive(p) for ps in daemons.values() for p in ps)
    assert not any(alive(p) for p in record.pids.values())


def python_without(nodes: Nodes, module: str) -> Path:
    """A copy of the doubles' py/ without `module`: an image (or a node) that lacks it (beside
    py/, so the doubles in it share the doubles' state/)."""
    py = nodes.doubles / f"py-without-{module}"
    shutil.copytree(nodes.doubles / "py", py)
    shutil.rmtree(py / module)
    return py


def test_apply_looks_into_the_vllm_image_before_it_starts_anything(nodes: Nodes) -> None:
    _target, _spec, out, _ = launch(nodes, "star4", "vllm", container=True)
    assert out.healthy, {h: (n.state, n.reason, n.log_tail) for h, n in out.nodes.items()}
    assert out.notes == []
    for host in HOSTS:
        (check,) = image_checks(nodes, host)
        assert check["image"] == "registry.example/vllm:test"
        assert "--rm" in check["argv"] and check["argv"][-3:-1] == ["python3", "-c"]
        # the launch's env reaches the look (a PYTHONPATH given with --env is the image's)
        assert check["container_env"]["PYTHONPATH"] == str(nodes.doubles / "py")
        assert check["time"] < docker_run(nodes, host)["time"]


@pytest.mark.parametrize("container", [True, False])
def test_apply_refuses_a_vllm_launch_without_vllm_and_starts_nothing(
        nodes: Nodes, container: bool) -> None:
    py = python_without(nodes, "vllm")
    _target, _spec, out, _ = launch(nodes, "star4", "vllm", container, {"PYTHONPATH": str(py)})
    assert not out.healthy and out.exit_code == 1 and out.record.pids == {}
    for host in HOSTS:
        reason = out.nodes[host].reason
        assert out.nodes[host].state == "failed", (host, reason)
        if container:
            assert reason.startswith("image registry.example/vllm:test has no vllm"), reason
        else:
            assert reason.startswith(f"python3 on {host} has no vllm"), reason
        assert "--container default" in reason
        assert not nodes.calls(host, "ray") and not nodes.calls(host, "vllm")
        assert not (container and [c for c in nodes.calls(host, "docker")
                                   if "--name" in c["argv"]])
    assert load_record(launch_state_path()) is None


def test_apply_refuses_bare_metal_vllm_without_ray_naming_the_fix(nodes: Nodes) -> None:
    py = python_without(nodes, "ray")
    _target, _spec, out, _ = launch(nodes, "star4", "vllm", False, {"PYTHONPATH": str(py)})
    assert out.exit_code == 1 and out.record.pids == {}
    for host in HOSTS:
        assert out.nodes[host].reason == (
            f"no Ray for python3 on {host}: pip install 'ray[default]' on every node, or "
            "launch in a container (--container default)")
        assert not nodes.calls(host, "ray")


def test_an_image_without_ray_gets_it_at_start_and_apply_says_so(
        nodes: Nodes, tmp_path: Path) -> None:
    """The image's python3 has pip but no Ray: `--apply` notes it and starts; each container
    pip-installs Ray (a stand-in pip, which puts the Ray double in place) before `ray start`."""
    py = python_without(nodes, "ray")
    fake = tmp_path / "image-bin"
    fake.mkdir()
    log = tmp_path / "pip.log"
    (fake / "python3").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -m ] && [ "$2" = pip ]; then\n'
        f'  echo "$*" >> {log}; tmp=$(mktemp -d {py}/.ray-XXXX)\n'
        f'  cp -r {nodes.doubles}/py/ray/. "$tmp" && mv -T "$tmp" {py}/ray 2>/dev/null; exit 0\n'
        "fi\n"
        'exec /usr/bin/python3 "$@"\n')
    (fake / "python3").chmod(0o755)
    path = f"{fake}:{nodes.doubles}/bin:/usr/bin:/bin"
    _target, _spec, out, _ = launch(nodes, "star4", "vllm", True,
                                    {"PYTHONPATH": str(py), "PATH": path})
    assert out.healthy, {h: (n.state, n.reason, n.log_tail) for h, n in out.nodes.items()}
    assert len(out.notes) == 4 and all(
        n.startswith(f"{h}: image registry.example/vllm:test has no Ray: ")
        for h, n in zip(HOSTS, out.notes, strict=True))
    assert "pip install 'ray[default]'" in out.notes[0]
    installs = log.read_text().splitlines()
    assert installs and set(installs) == {"-m pip install --no-cache-dir ray[default]"}


def test_a_hugging_face_model_uses_each_node_cache_and_token_and_records_no_secret(
        nodes: Nodes, tmp_path: Path) -> None:
    """The node's HF_HOME is mounted at the image's cache path and HF_TOKEN reaches the engine
    from the node's own environment; the token is in nothing fabric writes or says."""
    secret = "hf_" + "N0d3T0k3nV4lu3" * 3
    cache = tmp_path / "node-hf-home"
    nodes.env.update({"HF_TOKEN": secret, "HF_HOME": str(cache)})
    said: list[str] = []
    target, spec = launch_plan("star4", "sglang", {"PYTHONPATH": str(nodes.doubles / "py")})
    files = render(spec, "sglang", model="Qwen/Qwen3-8B", container="registry.example/s:test")
    meta = LaunchMeta({r.host: container_name("sglang", r.host) for r in spec.ranks},
                      "registry.example/s:test", None, (), {})
    out = apply_launch(target, spec, "sglang", files, 30000, False, 30.0, said.append, meta)
    assert out.healthy, {h: (n.state, n.reason, n.log_tail) for h, n in out.nodes.items()}
    assert cache.is_dir()  # made by the script, not by docker as root
    for host in HOSTS:
        run = docker_run(nodes, host)
        assert f"{cache}:/root/.cache/huggingface" in run["argv"]
        assert run["container_env"]["HF_TOKEN"] == secret
        assert run["container_env"]["HF_HOME"] == "/root/.cache/huggingface"
        assert secret not in " ".join(run["argv"])
    texts = [*said, *files.values(), launch_state_path().read_text(),
             *(p.read_text() for p in nodes.remote.rglob("*.sh"))]
    assert not any(secret in t for t in texts)
    assert stop_launch(target).exit_code == 0
