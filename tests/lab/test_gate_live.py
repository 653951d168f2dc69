"""On a configured star4 lab: `fabric gate` is bound to the live fabric (a changed MTU shuts it,
naming the twin; restored, it opens; an unreachable Spark is exit 3; a lab rebuilt under the
same name never inherits the pass), `fabric validate` exits 3 with one row for a Spark whose
sshd is stopped, and LLDP is fresh: a swap fails cabling, and right after the heal cabling
passes again (no wait for the TTL of the swapped entries)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric.gate import REPORT_NAME
from fabric.lab import faults
from fabric.lab.lifecycle import registry
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import STAR_LINK, Labs, fabric
from tests.lab.conftest import validate as validate_json

pytestmark = pytest.mark.lab

#: Families that do not run the bandwidth rounds (where a run need not open the gate).
QUICK = "link,mtu,addr,route,cabling,switch"
TWIN = "enp1s0f0np0"


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state directory of this module's runs (reports for the gate)."""
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def lab(star4_pushed: LabInfo) -> str:
    """star4, prepared switch, configured with `fabric push --apply`."""
    return star4_pushed.name


def validate(state: Path, lab: str, tmp_path: Path,
             only: str | None = QUICK) -> tuple[int, dict[str, Any], str]:
    scope = ("--only", only) if only is not None else ()
    return validate_json(lab, tmp_path, *scope, state_dir=state)


def gate(state: Path, lab: str) -> tuple[int, str]:
    proc = fabric("gate", "--lab", lab, state_dir=state)
    return proc.returncode, " ".join(proc.stderr.split())


@pytest.fixture(scope="module")
def full_pass(lab: str, state: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A full validation that passes (only a report that judged every check opens the gate; a
    `--only` pass does not): the report it saved for the gate, made once for the module."""
    code, report, err = validate(state, lab, tmp_path_factory.mktemp("pass"), only=None)
    bad = [r for r in report.get("results", []) if r["status"] in ("fail", "error")]
    assert code == 0 and report["passed"] and not bad, f"exit {code}: {bad}\n{err[-3000:]}"
    return saved_report(state, lab).read_bytes()


def saved_report(state: Path, lab: str) -> Path:
    """Where `fabric validate --lab` saves its report for `fabric gate`."""
    return state / "labs" / lab / REPORT_NAME


def passed(state: Path, lab: str, full_pass: bytes) -> None:
    """The module's passing full validation is the saved report again (the fabric is as it
    judged it: each test puts back what it changes)."""
    saved_report(state, lab).write_bytes(full_pass)


def set_mtu(lab: str, host: str, dev: str, mtu: int) -> None:
    netns = registry.load_lab(lab).namespaces[host]
    subprocess.run(["ip", "-n", netns, "link", "set", "dev", dev, "mtu", str(mtu)], check=True)


def test_gate_opens_on_the_fabric_it_judged_and_names_a_change(lab: str, state: Path,
                                                                full_pass: bytes) -> None:
    passed(state, lab, full_pass)
    code, err = gate(state, lab)
    assert code == 0 and "OPEN" in err and "live fabric matches" in err, err
    set_mtu(lab, "spark02", TWIN, 1500)
    try:
        code, err = gate(state, lab)
        assert code == 1 and f"spark02:{TWIN} mtu 9000 -> 1500" in err, err
    finally:
        set_mtu(lab, "spark02", TWIN, 9000)
    code, err = gate(state, lab)
    assert code == 0 and "OPEN" in err, err


def test_sshd_stopped_validate_is_3_with_one_row_and_the_gate_is_3(
        lab: str, state: Path, full_pass: bytes, tmp_path: Path) -> None:
    passed(state, lab, full_pass)
    faults.inject(lab, "sshd-stop", "spark02")
    try:
        code, err = gate(state, lab)  # the pass is fine, the fabric cannot be read now
        assert code == 3 and "spark02" in err and "connection refused" in err, err
        code, report, err = validate(state, lab, tmp_path)
    finally:
        faults.heal(lab)
    assert code == 3, err[-3000:]
    assert "spark02" in err and "could not complete" in " ".join(err.split())
    bad = [r for r in report["results"] if r["status"] in ("fail", "error")]
    assert [(r["check"], r["host"]) for r in bad] == [("host.reachable", "spark02")], bad
    assert "connection refused" in bad[0]["message"] and not report["passed"]
    code, err = gate(state, lab)  # the saved report is that failed run: shut, whatever the fabric
    assert code == 1 and "did not pass" in err, err


def _cabling(report: dict[str, Any]) -> dict[str, str]:
    return {r["link"]: r["status"] for r in report["results"]
            if r["check"] == "cabling.lldp" and r["link"]}


def test_swap_fails_cabling_and_right_after_the_heal_it_passes(lab: str, state: Path,
                                                                tmp_path: Path) -> None:
    faults.inject(lab, "swap", "crs804:qsfp56-dd-2-1,crs804:qsfp56-dd-3-1")
    try:
        code, report, err = validate(state, lab, tmp_path, "cabling")
    finally:
        faults.heal(lab)
    assert code == 1, err[-3000:]
    swapped = {STAR_LINK["spark02"], STAR_LINK["spark03"]}
    assert {k for k, v in _cabling(report).items() if v == "fail"} == swapped
    code, report, err = validate(state, lab, tmp_path, "cabling")  # at once: no TTL to wait out
    assert code == 0, err[-3000:]
    assert set(_cabling(report).values()) == {"pass"} and len(_cabling(report)) == 4


def test_a_lab_rebuilt_under_the_same_name_does_not_inherit_the_pass(
        lab: str, labs: Labs, state: Path, full_pass: bytes,
        monkeypatch: pytest.MonkeyPatch) -> None:
    passed(state, lab, full_pass)
    assert gate(state, lab)[0] == 0
    labs.rebuild(lab)  # down, then up again: unconfigured (no addresses, MTU 1500)
    code, err = gate(state, lab)
    assert code == 1 and "the fabric changed" in err, err
    assert f"spark01:{TWIN} mtu 9000 -> 1500" in err and "addresses 198." in err, err
    from fabric.gate import forget_lab

    monkeypatch.setenv("FABRIC_STATE_DIR", str(state))
    assert forget_lab(lab)  # what `fabric lab down` is to call
    code, err = gate(state, lab)
    assert code == 1 and "no report" in err, err
