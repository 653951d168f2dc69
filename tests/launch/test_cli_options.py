"""`fabric launch` options: --container, --engine-arg, --preset, --front; vLLM addresses as
IPs; the ring's subnet-aware NCCL proof (`proof-nccl`, captured by `rehearse`) and the refusal
of multi-node TP without it; `rehearse` without torch."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fabric.cli.common import resolve_target
from fabric.launch import spec as launch_plan
from fabric.report.model import CheckResult, Report, report_to_json
from tests.conftest import run_cli

RECORD = Path(__file__).resolve().parents[2] / "bench" / "nccl_rehearsal_h200x2" / "rank0.txt"
SUBNET_AWARE = ("spark01:604:604 [0] NCCL INFO NET/IB : Subnet-aware routing: 4 subnets, "
                "peers reached through their own subnet")
FAKE_DNS = {f"spark0{i}.mgmt.studio.lan": f"192.0.2.{i}" for i in range(1, 9)}


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(launch_plan, "resolve_ipv4", FAKE_DNS.__getitem__)
    return tmp_path / "state"


def passing_report(state: Path, topology: str) -> None:
    intent = resolve_target(None, None, topology).intent
    started = (datetime.now(UTC) - timedelta(seconds=30)).isoformat()
    report = Report.build(topology=topology, intent_hash=intent.intent_hash, started=started,
                          duration_s=1.0, results=[CheckResult("mtu.path", "pass",
                                                               expected=9000, actual=9000)])
    state.mkdir(parents=True, exist_ok=True)
    (state / "last-report.json").write_text(report_to_json(report))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(list(args), capsys)
    return code, out, " ".join(err.split())


def test_dry_run_shows_and_records_container_preset_and_engine_args(
        state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", "sglang", "-t", "star4", "--out", str(out),
                       "--container", "default", "--preset", "deepseek-v4.1-flash",
                       "--engine-arg=--mem-fraction-static=0.8",
                       "--engine-arg", "--reasoning-parser deepseek-r1")
    assert code == 0, err
    assert "container: nvcr.io/nvidia/sglang:26.05-py3" in err
    assert ("engine arguments: --quantization fp8 --kv-cache-dtype fp8_e4m3 --context-length "
            "32768 --mem-fraction-static=0.8 --reasoning-parser deepseek-r1 (preset "
            "deepseek-v4.1-flash)") in err
    spec = json.loads((out / "plan.json").read_text())
    assert spec["engine_args"][-3:] == ["--mem-fraction-static=0.8", "--reasoning-parser",
                                        "deepseek-r1"]
    assert spec["preset"] == "deepseek-v4.1-flash" and spec["tp"] == 4
    assert spec["container"] == {"image": "nvcr.io/nvidia/sglang:26.05-py3", "names": {
        f"spark0{i}": f"fabric-sglang-spark0{i}" for i in range(1, 5)}}
    script = (out / "spark02-sglang.sh").read_text()
    assert "  nvcr.io/nvidia/sglang:26.05-py3 \\\n  python3 -m sglang.launch_server" in script
    assert "  --reasoning-parser deepseek-r1\n" in script


def test_bare_metal_is_the_default(state: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    code, _, err = cli(capsys, "launch", "dp", "-t", "star4", "--out", str(tmp_path / "o"))
    assert code == 0 and "container: none (bare metal)" in err
    assert "docker" not in (tmp_path / "o" / "spark01-dp.sh").read_text()
    assert (tmp_path / "o" / "nginx-fabric-dp.conf").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--engine-arg=--tp-size=2"], "--engine-arg --tp-size: fabric renders this flag"),
    (["--engine-arg", "--port 1 --nnodes 2"], "--nnodes --port: fabric renders these flags"),
    (["--preset", "nope"], "--preset 'nope': unknown preset; known: deepseek-v4.1-flash"),
    (["--engine-arg", "'unterminated"], "--engine-arg \"'unterminated\": No closing quotation"),
    (["--front", "sglang-router"], "--front is for `fabric launch dp`, not sglang"),
    (["--container", " "], "--container: name an image"),
])
def test_bad_options_are_usage_errors(args: list[str], message: str, state: Path,
                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", "sglang", "-t", "star4", "--out", str(out), *args)
    assert code == 2 and message in err, err
    assert not out.exists()


def test_dp_with_the_engine_router_as_front(state: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", "dp", "-t", "star4", "--out", str(out), "--front",
                       "sglang-router")
    assert code == 0, err
    assert not (out / "nginx-fabric-dp.conf").exists()
    router = (out / "sglang-router-fabric-dp.sh").read_text()
    assert "python3 -m sglang_router.launch_router" in router
    assert json.loads((out / "plan.json").read_text())["front"] == "sglang-router"


def test_vllm_renders_ips_where_the_inventory_has_names(
        state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "ring4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", "vllm", "-t", "ring4", "--out", str(out), "--tp", "1",
                       "--pp", "4")
    assert code == 0, err
    spec = json.loads((out / "plan.json").read_text())
    assert spec["master_addr"] == "192.0.2.1"
    assert [r["fabric_addr"] for r in spec["ranks"]] == [f"192.0.2.{i}" for i in range(1, 5)]
    for i in range(1, 5):
        script = (out / f"spark0{i}-vllm.sh").read_text()
        assert f"export VLLM_HOST_IP=192.0.2.{i}\n" in script
        assert f"--node-ip-address=192.0.2.{i}" in script


def test_vllm_refuses_names_that_do_not_resolve(state: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "ring4")

    def nxdomain(name: str) -> str:
        raise OSError(f"[Errno -2] Name or service not known: {name}")

    monkeypatch.setattr(launch_plan, "resolve_ipv4", nxdomain)
    code, _, err = cli(capsys, "launch", "vllm", "-t", "ring4", "--out", str(tmp_path / "o"),
                       "--tp", "1", "--pp", "4")
    assert code == 2
    assert "spark01: its launch address 'spark01.mgmt.studio.lan' does not resolve" in err
    assert "vLLM over Ray needs IP addresses" in err


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_ring_tensor_parallel_needs_a_subnet_aware_nccl(
        engine: str, state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "ring4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", engine, "-t", "ring4", "--out", str(out))
    assert code == 1
    assert "launch refused: multi-node tensor parallel (TP4) on the ring ring4 needs a " in err
    assert "no proof recorded" in err and "fabric launch proof-nccl LOG" in err
    assert not out.exists()
    # data parallel has no cross-node TP, and TP1 x PP4 none either
    assert cli(capsys, "launch", "dp", "-t", "ring4", "--out", str(out))[0] == 0
    if engine == "vllm":
        assert cli(capsys, "launch", "vllm", "-t", "ring4", "--out", str(out), "--tp", "1",
                   "--pp", "4")[0] == 0
    # --force overrides, loudly and logged
    code, _, err = cli(capsys, "launch", engine, "-t", "ring4", "--out", str(out), "--force")
    assert code == 0 and "WARNING: --force: launching without a subnet-aware NCCL proof" in err
    assert "without a subnet-aware NCCL proof" in (out / "launch.log").read_text()


def test_proof_nccl_records_a_subnet_aware_log_and_opens_the_ring(
        state: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "ring4")
    stock = tmp_path / "stock.log"
    stock.write_text(RECORD.read_text())
    code, _, err = cli(capsys, "launch", "proof-nccl", str(stock), "-t", "ring4")
    assert code == 1 and "no 'Subnet-aware routing' line" in err
    assert not (state / "nccl-proof.json").exists()
    aware = tmp_path / "aware.log"
    aware.write_text(SUBNET_AWARE + "\n" + RECORD.read_text())
    code, _, err = cli(capsys, "launch", "proof-nccl", str(aware), "-t", "ring4")
    assert code == 0, err
    proof = json.loads((state / "nccl-proof.json").read_text())
    assert proof["line"] == SUBNET_AWARE and proof["source"] == str(aware)
    assert proof["intent_hash"] == resolve_target(None, None, "ring4").intent.intent_hash
    code, _, err = cli(capsys, "launch", "sglang", "-t", "ring4", "--out", str(tmp_path / "o"))
    assert code == 0, err
    # a proof for another intent does not count
    proof["intent_hash"] = "0123456789abcdef"
    (state / "nccl-proof.json").write_text(json.dumps(proof))
    code, _, err = cli(capsys, "launch", "sglang", "-t", "ring4", "--out", str(tmp_path / "o"))
    assert code == 1 and "was recorded for intent 0123456789abcdef" in err
    assert cli(capsys, "launch", "proof-nccl", str(tmp_path / "missing.log"), "-t",
               "ring4")[0] == 2


def fake_ranks(monkeypatch: pytest.MonkeyPatch, rank0: str, calls: list[dict[str, Any]]
               ) -> None:
    from nornir.core.task import Result

    from fabric.launch.run_rehearsal_rank import RankRun

    def run_rank(task: Any, script: str, env: dict[str, str], python: str, args: list[str],
                 timeout: float) -> Result:
        calls.append({"host": task.host.name, "env": env, "python": python})
        text = rank0 if env["RANK"] == "0" else ""
        if "NO_TORCH" in env:
            return Result(host=task.host, failed=True, result=RankRun(
                "REHEARSAL-ERROR: torch is not importable here: No module named 'torch'", 2))
        return Result(host=task.host, result=RankRun(text, 0))

    monkeypatch.setattr("fabric.launch.rehearse.run_rehearsal_rank", run_rank)


def test_rehearse_with_nccl_on_a_ring_records_the_proof(
        state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "ring4")
    calls: list[dict[str, Any]] = []
    fake_ranks(monkeypatch, SUBNET_AWARE + "\n" + RECORD.read_text(), calls)
    code, _, err = cli(capsys, "launch", "rehearse", "-t", "ring4", "--backend", "nccl",
                       "--python", "/opt/torch/bin/python3")
    assert code == 0, err
    assert len(calls) == 4 and all(c["env"]["NCCL_DEBUG"] == "INFO" for c in calls)
    assert "NCCL is subnet-aware" in err and "proof recorded" in err
    proof = json.loads((state / "nccl-proof.json").read_text())
    assert proof["source"] == "fabric launch rehearse --backend nccl"
    assert cli(capsys, "launch", "vllm", "-t", "ring4", "--out", str(tmp_path / "o"))[0] == 0


def test_rehearse_without_a_subnet_aware_line_records_nothing(
        state: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    calls: list[dict[str, Any]] = []
    fake_ranks(monkeypatch, RECORD.read_text(), calls)
    code, _, err = cli(capsys, "launch", "rehearse", "-t", "star4", "--backend", "nccl",
                       "--python", "/opt/torch/bin/python3")
    assert code == 0, err
    assert all("NCCL_DEBUG" not in c["env"] for c in calls)  # only rings ask for INFO
    assert not (state / "nccl-proof.json").exists()


def test_rehearse_says_how_to_install_torch(state: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    passing_report(state, "star4")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    code, _, err = cli(capsys, "launch", "rehearse", "-t", "star4")
    assert code == 2
    assert "fabric launch rehearse needs torch" in err and "make test" in err
    assert "pip install -e '.[rehearse]'" in err
    # nodes whose python has no torch: the run could not complete (exit 3), named
    calls: list[dict[str, Any]] = []
    fake_ranks(monkeypatch, "", calls)
    code, _, err = cli(capsys, "launch", "rehearse", "-t", "star4", "--python", "python3",
                       "--env", "NO_TORCH=1")
    assert code == 3
    assert ("torch is not importable by python3 on spark01, spark02, spark03, spark04" in err)


HF_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def test_the_hf_token_never_lands_in_anything_rendered_even_when_set_here(
        state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    secret = "hf_" + "Zq8s3cr3tT0k3n" * 3
    monkeypatch.setenv("HF_TOKEN", secret)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home-here"))
    passing_report(state, "star4")
    out = tmp_path / "out"
    for engine in ("vllm", "sglang", "dp"):
        code, stdout, err = cli(capsys, "launch", engine, "-t", "star4", "--out", str(out),
                                "--container", "default", "--model", HF_MODEL)
        assert code == 0, err
        assert "Hugging Face" in err and "HF_TOKEN" in err  # the dry run says what it passes
        written = {p: p.read_text() for p in out.rglob("*") if p.is_file()}
        assert {p.name for p in written} >= {"plan.json", f"spark01-{engine}.sh"}
        for text in [*written.values(), stdout, err]:
            assert secret not in text and "Zq8s3cr3t" not in text
        assert "-e HF_TOKEN " in written[out / f"spark01-{engine}.sh"]
        assert str(tmp_path / "hf-home-here") not in written[out / f"spark01-{engine}.sh"]


def test_an_hf_token_given_with_env_is_refused(state: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    passing_report(state, "star4")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "launch", "sglang", "-t", "star4", "--out", str(out),
                       "--env", "HF_TOKEN=hf_abcdef123456")
    assert code == 2 and "--env HF_TOKEN: a secret" in err, err
    assert "hf_abcdef123456" not in err and not out.exists()
