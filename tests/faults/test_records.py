"""The typed undo records: every kind's record survives faults.json, and a record that does
not fit (an older fabric's, a hand-edited one) is a clear error naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.faults import KINDS, Fault, RecordError, active_faults, inject
from fabric.lab.faults.records import (
    RECORDS,
    AutonegUndo,
    DefaultRouteUndo,
    DegradeUndo,
    DropEnd,
    DropUndo,
    FlapUndo,
    ImageDriftUndo,
    LinkDownUndo,
    MtuUndo,
    NmProfileUndo,
    PcieWidthUndo,
    RemoveIpcUndo,
    Route,
    ShapedEnd,
    SshdStopUndo,
    SwapRenameUndo,
    SwapRepairUndo,
    Tbf,
    TimeUndo,
    UndoRecord,
    WrongAddrUndo,
    undo_from_json,
)
from fabric.lab.faults.state import FORMAT, faults_from_json, faults_to_json, save_faults
from fabric.lab.lifecycle import registry
from tests.conftest import run_cli
from tests.faults.fakes import LAB, FakeKernel, install, paper_lab

SAMPLES: list[UndoRecord] = [
    MtuUndo(host="crs804", dev="qsfp56-dd-1-1", mtu=9000),
    LinkDownUndo(host="spark02", dev="cx7-p0"),
    DegradeUndo(before=(ShapedEnd("spark03", "cx7-p0", None),
                        ShapedEnd("crs804", "qsfp56-dd-3-1", Tbf(rate=5_000_000, burst=4096)))),
    SwapRenameUndo(hosts=("crs804", "spark01", "spark02"), switch="crs804",
                   lanes=("qsfp56-dd-1-1", "qsfp56-dd-2-1")),
    SwapRepairUndo(hosts=("spark01", "spark02", "spark03", "spark04"),
                   cables=(("spark01", "p0", "spark02", "p1"), ("spark03", "p0", "spark04", "p1"))),
    AutonegUndo(lane="qsfp56-dd-4-1", speed="200G-baseCR4"),
    AutonegUndo(lane="qsfp56-dd-4-1", speed=""),
    WrongAddrUndo(host="spark04", dev="enp1s0f0np0", good="198.19.0.4/24",
                  wrong="198.19.0.200/24"),
    DefaultRouteUndo(host="spark04", previous=(Route("10.99.0.1", "mgmt0"), Route(None, "x"))),
    DefaultRouteUndo(host="spark04", previous=()),
    SshdStopUndo(host="spark01"),
    TimeUndo(host="spark02"),
    NmProfileUndo(host="spark01", path="/etc/NetworkManager/system-connections/w.nmconnection",
                  previous=None),
    PcieWidthUndo(host="spark01", netdev="enP2p1s0f0np0", work="/run/fabric/labs/x/pcie"),
    ImageDriftUndo(host="spark03", path="/etc/docker/fabric-lab-images.json",
                   previous='{"images": []}'),
    RemoveIpcUndo(host="spark02", path="/etc/systemd/logind.conf.d/90-lab-fault.conf",
                  previous="[Login]\nRemoveIPC=no\n"),
    FlapUndo(host="spark03", dev="cx7-p0", pid=4243),
    DropUndo(ends=(DropEnd("spark03", "cx7-p0", "clsact", added_qdisc=True),
                   DropEnd("crs804", "qsfp56-dd-3-1", "root"))),
    DropUndo(ends=(DropEnd("spark01", "cx7-p0", "clsact"),)),
]


def _fault(undo: UndoRecord) -> Fault:
    return Fault(undo.KIND, "somewhere", f"{undo.KIND} happened", undo)


def test_every_kind_and_record_type_has_a_sample() -> None:
    assert {s.KIND for s in SAMPLES} == set(KINDS)
    assert {type(s) for s in SAMPLES} == set(RECORDS)


@pytest.mark.parametrize("undo", SAMPLES, ids=lambda u: type(u).__name__)
def test_a_record_survives_faults_json(undo: UndoRecord) -> None:
    text = json.dumps(faults_to_json([_fault(undo)]), sort_keys=True)
    [back] = faults_from_json(json.loads(text))
    assert back == _fault(undo)
    assert type(back.undo) is type(undo)


def test_the_file_says_its_format_and_each_record_its_type(lab_dir: Path) -> None:
    save_faults(LAB, [_fault(SAMPLES[0]), _fault(SAMPLES[-1])])
    data = json.loads((lab_dir / "faults.json").read_text())
    assert data["format"] == FORMAT == "fabric.lab.faults/2"
    assert data["faults"][0] == {"kind": "mtu", "target": "somewhere",
                                 "summary": "mtu happened",
                                 "undo": {"type": "mtu", "host": "crs804",
                                          "dev": "qsfp56-dd-1-1", "mtu": 9000}}
    assert data["faults"][1]["undo"] == {"type": "drop", "ends": [
        {"host": "spark01", "dev": "cx7-p0", "at": "clsact", "added_qdisc": False}]}
    assert active_faults(LAB) == [_fault(SAMPLES[0]), _fault(SAMPLES[-1])]


def test_a_record_reads_like_the_old_dicts() -> None:
    flap = FlapUndo(host="spark03", dev="cx7-p0", pid=4243)
    assert (flap["host"], flap["dev"], int(flap["pid"])) == ("spark03", "cx7-p0", 4243)
    with pytest.raises(KeyError):
        flap["KIND"]


def test_no_file_or_an_empty_old_one_is_no_faults(lab_dir: Path) -> None:
    assert active_faults(LAB) == []
    (lab_dir / "faults.json").write_text("[]\n")
    assert active_faults(LAB) == []


OLD_RECORD = [{"kind": "flap", "target": "qsfp56-dd-3-1", "summary": "cable bounces",
               "undo": {"host": "spark03", "dev": "cx7-p0", "pid": 4243}}]


def test_an_old_fabrics_record_is_a_clear_error(lab_dir: Path) -> None:
    (lab_dir / "faults.json").write_text(json.dumps(OLD_RECORD))
    with pytest.raises(RecordError, match=r"holds fault records of an older fabric .* "
                                          r"rebuild the lab"):
        active_faults(LAB)


def test_healing_a_lab_with_an_old_record_says_so_without_a_traceback(
        lab_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    info, _ = paper_lab("star4", lab_dir)
    monkeypatch.setattr(registry, "load_lab", lambda name: info)
    (lab_dir / "faults.json").write_text(json.dumps(OLD_RECORD))
    code, _, err = run_cli(["lab", "heal", "--name", LAB], capsys)
    assert code == 3
    assert "error:" in err and "older fabric" in err and "Traceback" not in err
    assert json.loads((lab_dir / "faults.json").read_text()) == OLD_RECORD  # left alone


def test_no_fault_is_injected_over_a_record_that_cannot_be_read(
        lab_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info, _ = paper_lab("star4", lab_dir)
    kernel = FakeKernel()
    install(monkeypatch, kernel, lab_dir)
    monkeypatch.setattr(registry, "load_lab", lambda name: info)
    (lab_dir / "faults.json").write_text(json.dumps(OLD_RECORD))
    with pytest.raises(RecordError, match="older fabric"):
        inject(LAB, "link-down", "spark02:p0")
    assert kernel.calls == []


def _doc(undo: dict[str, Any], kind: str = "flap") -> dict[str, Any]:
    return {"format": FORMAT, "faults": [{"kind": kind, "target": "t", "summary": "s",
                                          "undo": undo}]}


@pytest.mark.parametrize(("doc", "message"), [
    ({"format": "fabric.lab.faults/9", "faults": []}, "not a fault record of format"),
    ("flap", "not a fault record of format"),
    ({"format": FORMAT, "faults": {}}, '"faults" must be a list'),
    ({"format": FORMAT, "faults": [{"kind": "flap"}]},
     r"faults\[0\]: missing field\(s\) target, summary, undo"),
    (_doc({"host": "spark03", "dev": "cx7-p0", "pid": 1}), 'expected an object with a "type"'),
    (_doc({"type": "melt"}), "unknown record type 'melt'"),
    (_doc({"type": "mtu", "host": "h", "dev": "d", "mtu": 1}),
     "a mtu record cannot undo a flap fault"),
    (_doc({"type": "flap", "host": "h", "dev": "d"}), r"faults\[0\]\.undo: missing field pid"),
    (_doc({"type": "flap", "host": "h", "dev": "d", "pid": "12"}),
     r"faults\[0\]\.undo\.pid: expected int, got '12'"),
    (_doc({"type": "flap", "host": "h", "dev": "d", "pid": True}), "pid: expected int"),
    (_doc({"type": "flap", "host": "h", "dev": "d", "pid": 1, "x": 2}), "unknown field"),
    (_doc({"type": "drop", "ends": [{"host": "h", "dev": "d", "at": "ingress"}]}, "drop"),
     r"undo\.ends\[0\]\.at: expected one of 'clsact', 'root'"),
    (_doc({"type": "swap-rename", "hosts": [], "switch": "s", "lanes": ["a"]}, "swap"),
     r"undo\.lanes: expected 2 items, got 1"),
    (_doc({"type": "degrade", "before": [{"host": "h", "dev": "d", "tbf": {"rate": 1}}]},
          "degrade"), "none of the forms fit"),
])
def test_a_record_that_does_not_fit_names_what_is_wrong(doc: Any, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        faults_from_json(doc)


def test_a_swap_record_is_one_of_two_types() -> None:
    for undo in SAMPLES:
        if undo.KIND == "swap":
            assert undo_from_json("swap", undo.to_json()) == undo
    with pytest.raises(RecordError, match="a swap-rename record cannot undo a mtu fault"):
        undo_from_json("mtu", SAMPLES[3].to_json())
