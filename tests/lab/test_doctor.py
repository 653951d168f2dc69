"""`fabric doctor` on a lab: an unconfigured lab fails host.ipc (systemd's default RemoveIPC),
a pushed one passes every host check; each host fault (`nm-profile`, `remove-ipc`,
`pcie-width`, `image-drift`) fails its check on the faulted Spark only, and `fabric lab heal`
makes doctor pass again."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from fabric.facts import facts_from_json
from fabric.lab.host.hostenv import host_path
from fabric.lab.lifecycle.registry import LabInfo
from fabric.redact import MASK
from tests.lab.conftest import Inject, Labs, configure, fabric, in_host, validate

pytestmark = pytest.mark.lab

LAB = "t-doc"


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Any:
    with labs.private("star4", LAB, switch_prepared=True) as info:
        yield info


def doctor(lab: str, tmp_path: Path, state_dir: Path) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "doctor.json"
    out.unlink(missing_ok=True)
    proc = fabric("doctor", "--lab", lab, "--json", str(out), state_dir=state_dir)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


def bad(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(r["check"], r["host"]) for r in report["results"]
            if r["status"] in ("fail", "error", "warn")}


def test_unconfigured_lab_fails_remove_ipc_everywhere(lab: LabInfo, tmp_path: Path,
                                                      state_dir: Path) -> None:
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.ipc", h) for h in ("spark01", "spark02", "spark03", "spark04")}
    assert {r["check"].split(".")[0] for r in report["results"]} == {"host"}
    assert (state_dir / "labs" / LAB / "last-doctor.json").exists()
    assert not (state_dir / "labs" / LAB / "last-report.json").exists()  # the gate's: untouched


def test_pushed_lab_passes_doctor(lab: LabInfo, tmp_path: Path, state_dir: Path) -> None:
    configure(LAB, state_dir)
    text = in_host(lab, "spark02", "cat", "/etc/systemd/logind.conf.d/40-fabric.conf")
    assert "RemoveIPC=no" in text
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 0, err
    statuses = {(r["check"], r["status"]) for r in report["results"]}
    assert {c for c, s in statuses if s == "pass"} == {"host.nm", "host.ipc", "host.image"}
    images = [r["message"] for r in report["results"] if r["check"] == "host.image"]
    assert "nvcr.io/nvidia/vllm:26.05.post1-py3: one image (105be6b2f5d1) on 4 Spark(s)" in \
        images, images
    skip = [r for r in report["results"] if r["status"] == "skip"]
    pcie = [r for r in skip if r["check"] == "host.pcie"]
    assert len(pcie) == 8  # every cabled twin: a lab twin has no PCIe function
    assert all("no PCIe function read (profile veth" in r["message"] for r in pcie)
    (memory,) = [r for r in skip if r["check"] == "host.memory"]
    assert "profile veth runs no nccl-tests" in memory["message"]


def test_nm_profile_fault_fails_host_nm_on_that_twin(lab: LabInfo, tmp_path: Path,
                                                     state_dir: Path, inject: Inject) -> None:
    inject(LAB, "nm-profile", "spark03:enp1s0f0np0")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.nm", "spark03")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "Wired connection 1" in r["message"] and "enp1s0f0np0" in r["message"]
    assert r["link"] == "spark03:p0--crs804:qsfp56-dd-3-1"
    assert "nmcli connection delete" in r["hint"]


def test_remove_ipc_fault_fails_host_ipc_then_heal_passes(lab: LabInfo, tmp_path: Path,
                                                          state_dir: Path,
                                                          inject: Inject) -> None:
    inject(LAB, "remove-ipc", "spark01")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.ipc", "spark01")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "90-lab-fault.conf" in r["message"]
    assert r["hint"].startswith("set RemoveIPC=no in /etc/systemd/logind.conf")
    heal = fabric("lab", "heal", "--name", LAB)
    assert heal.returncode == 0, heal.stderr
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 0, err


def test_pcie_width_fault_fails_host_pcie_on_that_twin(lab: LabInfo, tmp_path: Path,
                                                        state_dir: Path, inject: Inject) -> None:
    inject(LAB, "pcie-width", "spark04:p0")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.pcie", "spark04")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "enP2p1s0f0np0" in r["message"] and (r["expected"], r["actual"]) == (
        "Gen5 x4", "Gen5 x2")
    assert "BIOS before 2026-04" in r["hint"]
    assert in_host(lab, "spark04", "cat", "/sys/class/net/enP2p1s0f0np0/mtu").strip() == "9000"
    heal = fabric("lab", "heal", "--name", LAB)
    assert heal.returncode == 0, heal.stderr
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 0, err


def test_image_drift_fails_doctor_and_validate_and_the_gate_refuses(
        lab: LabInfo, tmp_path: Path, state_dir: Path, inject: Inject) -> None:
    """One Spark pulled the engine image's tag again and got another build (another NCCL):
    ranks would run two builds. Doctor and a full validate name it with its fix; the gate
    stays shut."""
    inject(LAB, "image-drift", "spark02")
    code, report, err = doctor(LAB, tmp_path, state_dir)
    assert code == 1, err
    assert bad(report) == {("host.image", "spark02")}
    (r,) = [r for r in report["results"] if r["status"] == "fail"]
    assert "nvcr.io/nvidia/vllm:26.05.post1-py3 is image" in r["message"]
    assert "(NCCL 2.27.7); the other Sparks' is 105be6b2f5d1 (NCCL 2.28.9)" in r["message"]
    assert "`docker pull nvcr.io/nvidia/vllm:26.05.post1-py3` on spark02" in r["hint"]
    code, full, err = validate(LAB, tmp_path, state_dir=state_dir)
    assert code == 1, err[-3000:]
    failed = {(r["check"], r["host"]) for r in full["results"] if r["status"] == "fail"}
    assert failed == {("host.image", "spark02")}, failed
    gate = fabric("gate", "--lab", LAB, state_dir=state_dir)
    assert gate.returncode == 1 and "did not pass" in gate.stderr, gate.stderr[-2000:]


def test_bad_input_exits_2(tmp_path: Path, state_dir: Path) -> None:
    proc = fabric("doctor", "--lab", "t-doc-no-such-lab", state_dir=state_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "no lab named t-doc-no-such-lab" in proc.stderr


def _text(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    handle = tar.extractfile(member)
    assert handle is not None
    return handle.read().decode()


def test_bundle_holds_raw_facts_reports_export_and_no_secret(lab: LabInfo, tmp_path: Path,
                                                             state_dir: Path) -> None:
    secrets = json.loads((lab.dir / "secrets.json").read_text())
    password = secrets["routeros_password"]
    # a secret pasted into a config file the batch reads: the bundle must mask it
    holder = lab.hosts["spark02"].pids["holder"]
    note = host_path(holder, "/etc/systemd/logind.conf.d/50-note.conf")
    note.write_text(f"# switch password {password}\n[Login]\n")
    try:
        out = tmp_path / "b.tar.gz"
        proc = fabric("bundle", "--lab", LAB, "-o", str(out), state_dir=state_dir)
        assert proc.returncode == 0, proc.stderr
    finally:
        note.unlink()
    with tarfile.open(out) as tar:
        files = {m.name.split("/", 1)[1]: _text(tar, m) for m in tar.getmembers()
                 if m.isfile()}
    assert {f"raw/{h}.txt" for h in ("spark01", "spark02", "spark03", "spark04")} <= set(files)
    assert files["raw/crs804.export.rsc"].startswith("# ") and "/interface" in \
        files["raw/crs804.export.rsc"]
    assert "reports/last-doctor.json" in files and json.loads(files["errors.json"]) == {}
    facts = facts_from_json(files["facts.json"])
    assert set(facts.sparks) == {"spark01", "spark02", "spark03", "spark04"}
    assert facts.switch is not None and facts.sparks["spark02"].host_state.remove_ipc is False
    assert json.loads(files["versions.json"])["topology"] == "star4"
    assert "@@fabric-job begin logind" in files["raw/spark02.txt"]
    assert f"# switch password {MASK}" in files["raw/spark02.txt"]
    leaked = [name for name, text in files.items()
              for key, value in secrets.items() if "password" in key and value in text]
    assert leaked == []


def test_bundle_bad_output_exits_2(tmp_path: Path, state_dir: Path) -> None:
    proc = fabric("bundle", "--lab", LAB, "-o", str(tmp_path / "b.zip"), state_dir=state_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and ".tar.gz" in proc.stderr
