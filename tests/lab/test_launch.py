"""Launch on the lab twin: the gate, a real torch.distributed rehearsal (gloo on CPU) across the
star4 lab's Sparks with the launch's env, ranks and rendezvous address, and `launch --apply` /
`launch stop`, bare metal and in a container, with TEST DOUBLES of SGLang and docker (see
DOUBLES)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.lifecycle.registry import LabInfo, load_lab
from fabric.launch.apply import probe
from fabric.launch.state import RUN_ID_VAR, RUN_LABEL, launch_state_path, load_record
from tests.lab.conftest import fabric, in_host

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def validated(star4_pushed: LabInfo) -> LabInfo:
    """star4 lab, pushed and validated (the gate's report is written by validate)."""
    info = star4_pushed
    # every check: only a report that judged them all opens the gate (a `--only` pass does not)
    val = fabric("validate", "--lab", info.name)
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


# TEST DOUBLES, not docker or SGLang (tests/launch/doubles, see its README): copied into the
# lab's directory, their `py/` on a PYTHONPATH and their `bin/` on a PATH that the launch passes
# with `--env`, so the SAME rendered scripts run `python3 -m sglang.launch_server` (or `docker
# run … python3 -m sglang.launch_server`) with the same flags and env. The SGLang double
# "loads weights" for a moment, fails like a broken model when <model>/BROKEN-<hostname> exists,
# and answers /health once it has bound its port (FABRIC_DOUBLE_HTTP=1). Each double records
# its argv and env in state/<hostname>/calls.jsonl.
DOUBLES = Path(__file__).resolve().parents[1] / "launch" / "doubles"


@dataclass(frozen=True)
class Engine:
    """The doubles' copy for one test, and a model directory."""

    root: Path
    model: Path

    def env(self) -> list[str]:
        return ["--env", f"PYTHONPATH={self.root / 'py'}", "--env", "FABRIC_DOUBLE_HTTP=1"]

    def calls(self, host: str, tool: str) -> list[dict[str, Any]]:
        path = self.root / "state" / host / "calls.jsonl"
        return [c for c in map(json.loads, path.read_text().splitlines()) if c["tool"] == tool]

    def ready_pid(self, host: str, tool: str = "sglang") -> int:
        return int((self.root / "state" / host / f"ready-{tool}").read_text())


@pytest.fixture
def engine(validated: LabInfo, tmp_path: Path) -> Engine:
    """The doubles and a model directory in the lab's own directory: every Spark sees it, and
    its non-root user can read it (pytest's /tmp is private to root, and each lab host has its
    own /tmp); the doubles' state/ is writable by that user."""
    base = validated.dir / "engine" / tmp_path.name
    base.parent.mkdir(mode=0o755, exist_ok=True)
    base.parent.chmod(0o755)
    shutil.copytree(DOUBLES, base / "doubles", ignore=shutil.ignore_patterns("__pycache__",
                                                                             "state"))
    for path in [base, *(base / "doubles").rglob("*")]:
        path.chmod(0o755)
    (base / "doubles" / "state").mkdir(mode=0o777)
    (base / "doubles" / "state").chmod(0o1777)
    model = base / "model"
    model.mkdir(mode=0o755)
    return Engine(base / "doubles", model)


@pytest.fixture
def launch_lab(validated: LabInfo) -> Iterator[LabInfo]:
    """The validated lab with no launch recorded before, and none left running after."""
    fabric("launch", "stop", "--lab", validated.name)
    yield validated
    fabric("launch", "stop", "--lab", validated.name)


def environ(info: LabInfo, host: str, pid: int) -> dict[str, str]:
    raw = in_host(info, host, "cat", f"/proc/{pid}/environ")
    return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def rendered_exports(script: str) -> dict[str, str]:
    return {k: v.strip("'") for k, v in re.findall(r"^export (\w+)=(.*)$", script, re.M)}


def apply(info: LabInfo, engine: Engine, kind: str, out: Path, *extra: str
          ) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    proc = fabric("launch", kind, "--lab", info.name, "--out", str(out), "--model",
                  str(engine.model), *engine.env(), *extra, "--apply", "--health-timeout", "60")
    return proc, time.monotonic() - t0


def test_apply_starts_every_node_reaches_health_and_stop_removes_all(
        launch_lab: LabInfo, engine: Engine, tmp_path: Path) -> None:
    info = launch_lab
    proc, apply_s = apply(info, engine, "sglang", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = load_record(launch_state_path(info.name))
    assert record is not None and not record.forced
    assert proc.stdout.strip() == f"RUN_ID {record.run_id}"
    assert sorted(record.pids) == ["spark01", "spark02", "spark03", "spark04"]
    holders = load_lab(info.name).hosts
    for host, pid in record.pids.items():
        # the process runs in the host's namespace, with the rendered env
        assert os.readlink(f"/proc/{pid}/ns/net") == os.readlink(
            f"/proc/{holders[host].pids['holder']}/ns/net")
        env = environ(info, host, pid)
        script = (tmp_path / "out" / f"{host}-sglang.sh").read_text()
        expected = rendered_exports(script)
        assert expected["NCCL_IB_HCA"] == "=rocep1s0f0,roceP2p1s0f0"
        assert {k: env.get(k) for k in expected} == expected
        assert env[RUN_ID_VAR] == record.run_id
        cmdline = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
        assert cmdline[1:3] == ["-m", "sglang.launch_server"]
        assert f"{record.run_dir}/{host}.pid" and in_host(
            info, host, "cat", f"{record.run_dir}/{host}.pid").strip() == str(pid)
        assert f"started (pid {pid})" in proc.stderr
    assert probe(f"http://{info.mgmt['spark01']}:30000/health")
    assert "health http://" in proc.stderr and ": ok" in proc.stderr
    assert "forced=False" in (tmp_path / "out" / "launch.log").read_text()

    t0 = time.monotonic()
    stop = fabric("launch", "stop", "--lab", info.name)
    stop_s = time.monotonic() - t0
    assert stop.returncode == 0, stop.stderr
    assert not any(running(pid) for pid in record.pids.values())
    assert not probe(f"http://{info.mgmt['spark01']}:30000/health")
    assert load_record(launch_state_path(info.name)) is None
    again = fabric("launch", "stop", "--lab", info.name)
    assert again.returncode == 0 and "nothing to stop" in again.stderr
    print(f"apply to healthy {apply_s:.1f} s, stop {stop_s:.1f} s")


def test_a_node_that_fails_to_start_is_reported_while_the_others_serve(
        launch_lab: LabInfo, engine: Engine, tmp_path: Path) -> None:
    info = launch_lab
    (engine.model / "BROKEN-spark03").touch()
    proc, _ = apply(info, engine, "dp", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr[-3000:]
    err = proc.stderr
    assert re.search(r"spark03 .*exited", err)
    assert "last lines of" in err and "cannot load the weights on spark03" in err
    record = load_record(launch_state_path(info.name))
    assert record is not None
    assert not running(record.pids["spark03"])
    for host in ("spark01", "spark02", "spark04"):
        assert re.search(rf"{host} .*healthy", err)
        assert running(record.pids[host])
        assert probe(f"http://{info.mgmt[host]}:30000/health")
    assert f"health http://{info.mgmt['spark03']}:30000/health: no answer" in err
    stop = fabric("launch", "stop", "--lab", info.name)
    assert stop.returncode == 0, stop.stderr
    assert "spark03: nothing running" in stop.stderr
    assert not any(running(pid) for pid in record.pids.values())


def test_container_launch_runs_in_docker_on_every_spark_and_stop_stops_the_containers(
        launch_lab: LabInfo, engine: Engine, tmp_path: Path) -> None:
    """`--container` on the lab: `docker` (the double, first on the PATH given with --env) runs
    the engine on each Spark with host network/IPC, GPUs, RDMA and the validated env; `stop`
    stops exactly the recorded containers."""
    info = launch_lab
    out = tmp_path / "out"
    path = f"{engine.root / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    proc, apply_s = apply(info, engine, "sglang", out, "--env", f"PATH={path}", "--container",
                          "fabric-test/sglang:double", "--preset", "deepseek-v4.1-flash",
                          "--engine-arg=--mem-fraction-static=0.7")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = load_record(launch_state_path(info.name))
    assert record is not None and record.image == "fabric-test/sglang:double"
    hosts = ["spark01", "spark02", "spark03", "spark04"]
    assert record.containers == {h: f"fabric-sglang-{h}" for h in hosts}
    assert record.env["PATH"] == path  # `stop` finds the same docker
    holders = load_lab(info.name).hosts
    servers = {}
    for rank, host in enumerate(hosts):
        expected = rendered_exports((out / f"{host}-sglang.sh").read_text())
        (run,) = engine.calls(host, "docker")
        words = " ".join(run["argv"])
        for want in ("run --rm --name fabric-sglang-" + host, "--network host", "--ipc host",
                     "--gpus all", "--device /dev/infiniband", "--cap-add IPC_LOCK",
                     "--ulimit memlock=-1", "--shm-size 32g",
                     f"-v {engine.model}:{engine.model}:ro",
                     "fabric-test/sglang:double python3 -m sglang.launch_server"):
            assert want in words, (host, want)
        assert run["labels"] == {RUN_LABEL: record.run_id}
        assert run["env"][RUN_ID_VAR] == record.run_id
        # inside the "container": exactly the validated env, none of the login's
        inside = run["container_env"]
        assert {k: inside.get(k) for k in expected} == expected
        assert expected["NCCL_SOCKET_IFNAME"] == "=enp1s0f0np0" and "NCCL_CROSS_NIC" in expected
        assert RUN_ID_VAR not in inside
        (server,) = engine.calls(host, "sglang")
        flat = " ".join(server["argv"])
        assert f"--node-rank {rank} " in flat and "--dist-init-addr 198.19.0.1:20000" in flat
        assert flat.endswith("--quantization fp8 --kv-cache-dtype fp8_e4m3 --context-length "
                             "32768 --mem-fraction-static=0.7")
        pid = engine.ready_pid(host)
        servers[host] = pid
        # the engine runs on that Spark (its network namespace), under the container's env
        assert os.readlink(f"/proc/{pid}/ns/net") == os.readlink(
            f"/proc/{holders[host].pids['holder']}/ns/net")
        env = environ(info, host, pid)
        assert {k: env.get(k) for k in expected} == expected and RUN_ID_VAR not in env
    assert probe(f"http://{info.mgmt['spark01']}:30000/health")

    t0 = time.monotonic()
    stop = fabric("launch", "stop", "--lab", info.name)
    stop_s = time.monotonic() - t0
    assert stop.returncode == 0, stop.stderr
    for host in hosts:
        assert f"{host}: stopped (container fabric-sglang-{host}" in stop.stderr
        verbs = [c["argv"] for c in engine.calls(host, "docker")[1:]]
        assert [v for v in verbs if v[0] == "stop"] == [["stop", "-t", "20",
                                                         f"fabric-sglang-{host}"]]
    assert not any(running(pid) for pid in [*servers.values(), *record.pids.values()])
    assert not probe(f"http://{info.mgmt['spark01']}:30000/health")
    assert load_record(launch_state_path(info.name)) is None
    print(f"container apply to healthy {apply_s:.1f} s, stop {stop_s:.1f} s")
