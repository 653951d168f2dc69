"""Launch on the lab twin: the gate, a real torch.distributed rehearsal (gloo on CPU) across the
star4 lab's Sparks with the launch's env, ranks and rendezvous address, and `launch --apply` /
`launch stop` with a TEST DOUBLE of SGLang (see SGLANG_TEST_DOUBLE)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fabric.lab.registry import LabInfo, load_lab
from fabric.launch.apply import probe
from fabric.launch.state import RUN_ID_VAR, launch_state_path, load_record
from tests.lab.conftest import in_host

pytestmark = pytest.mark.lab

FABRIC = [sys.executable, "-m", "fabric"]


def fabric(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FABRIC, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def validated(lab_factory: Callable[[str, str], LabInfo]) -> LabInfo:
    """star4 lab, pushed and validated (the gate's report is written by validate)."""
    info = lab_factory("star4", "t-launch", switch_prepared=True)
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


# TEST DOUBLE, not SGLang: installed as the `sglang` package on a PYTHONPATH that the launch
# passes with `--env`, so the SAME rendered script runs `python3 -m sglang.launch_server` with
# the same flags and env. It "loads weights" for a moment, fails like a broken model when
# <model>/BROKEN-<hostname> exists, and answers /health only once it has bound its port.
SGLANG_TEST_DOUBLE = """\
import argparse, http.server, os, socket, sys, time
ap = argparse.ArgumentParser(description="TEST DOUBLE of sglang.launch_server")
ap.add_argument("--model-path", required=True)
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=30000)
args, _ = ap.parse_known_args()
host = socket.gethostname()
if os.path.exists(os.path.join(args.model_path, "BROKEN-" + host)):
    print("test double: cannot load the weights on " + host + ": shard 7 is corrupt",
          flush=True)
    sys.exit(1)
time.sleep(1.0)

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *a):
        pass

server = http.server.HTTPServer((args.host, args.port), Health)
print("test double: serving on %s:%d" % (args.host, args.port), flush=True)
server.serve_forever()
"""


@pytest.fixture
def engine(validated: LabInfo, tmp_path: Path) -> tuple[Path, Path]:
    """(PYTHONPATH holding the test double `sglang`, a model directory), in the lab's own
    directory: every Spark sees it, and its non-root user can read it (pytest's /tmp is
    private to root, and each lab host has its own /tmp)."""
    base = validated.dir / "engine" / tmp_path.name
    pkg = base / "shim" / "sglang"
    pkg.mkdir(parents=True, mode=0o755)
    for d in (base.parent, base, base / "shim"):
        d.chmod(0o755)
    (pkg / "__init__.py").write_text('"""TEST DOUBLE of SGLang (fabric lab tests)."""\n')
    (pkg / "launch_server.py").write_text(SGLANG_TEST_DOUBLE)
    model = base / "model"
    model.mkdir(mode=0o755)
    return base / "shim", model


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


def apply(info: LabInfo, engine_dir: tuple[Path, Path], kind: str, out: Path
          ) -> tuple[subprocess.CompletedProcess[str], float]:
    shim, model = engine_dir
    t0 = time.monotonic()
    proc = fabric("launch", kind, "--lab", info.name, "--out", str(out), "--model", str(model),
                  "--env", f"PYTHONPATH={shim}", "--apply", "--health-timeout", "60")
    return proc, time.monotonic() - t0


def test_apply_starts_every_node_reaches_health_and_stop_removes_all(
        launch_lab: LabInfo, engine: tuple[Path, Path], tmp_path: Path) -> None:
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
        launch_lab: LabInfo, engine: tuple[Path, Path], tmp_path: Path) -> None:
    info = launch_lab
    (engine[1] / "BROKEN-spark03").touch()
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
