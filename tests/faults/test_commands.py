"""Every fault kind's inject and heal, on a paper lab and a recording kernel: the commands
they run must stay those in `commands.json` (recorded from the single-module faults.py that
the package replaced, so a change of any command line or of their order fails here).

`python -m tests.faults.test_commands MODULE_FILE [CASE ...]` writes commands.json anew (only
the cases named, where any are) from the `inject`/`heal` of a faults module (a file, e.g.
fabric/lab/faults/__init__.py), for a deliberate change."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fabric.lab.lifecycle import registry
from tests.faults.fakes import LAB, FakeKernel, install, paper_lab

GOLDEN = Path(__file__).with_name("commands.json")
LANE3_TBF = [{"kind": "tbf", "root": True, "options": {"rate": 5_000_000, "burst": 4096}}]

#: (id, topology, kind, target, kernel state)
CASES: list[tuple[str, str, str, str, dict[str, Any]]] = [
    ("mtu", "star4", "mtu", "qsfp56-dd-1-1", {}),
    ("link-down", "star4", "link-down", "spark02:p0", {}),
    ("swap-switch", "star4", "swap", "crs804:qsfp56-dd-1-1,crs804:qsfp56-dd-2-1",
     {"links": {"qsfp56-dd-2-1": {"mtu": 1500, "flags": ["BROADCAST"]}}}),
    ("swap-ring", "ring4", "swap", "spark01:p0,spark03:p0",
     {"addrs": {"enp1s0f0np0": ["198.19.128.1/24"]},
      "sysctls": {"net.ipv4.conf.enp1s0f0np0.arp_ignore": "1",
                  "net.ipv4.conf.enp1s0f0np0.arp_announce": "2"}}),
    ("degrade", "star4", "degrade", "spark03:p0", {"qdiscs": {"qsfp56-dd-3-1": LANE3_TBF}}),
    ("autoneg", "star4", "autoneg", "qsfp56-dd-4-1", {}),
    ("wrong-addr", "star4", "wrong-addr", "spark04:enp1s0f0np0",
     {"addrs": {"enp1s0f0np0": ["198.19.0.4/24"]}}),
    ("wrong-addr-200", "star4", "wrong-addr", "spark04:enp1s0f0np0",
     {"addrs": {"enp1s0f0np0": ["198.19.0.200/24"]}}),
    ("default-route", "star4", "default-route", "spark04:enp1s0f0np0",
     {"addrs": {"enp1s0f0np0": ["198.19.0.254/24"]},
      "routes": [{"dst": "default", "gateway": "10.99.0.1", "dev": "mgmt0"}]}),
    ("sshd-stop", "star4", "sshd-stop", "spark01", {}),
    ("time", "star4", "time", "spark02", {}),
    ("flap-star", "star4", "flap", "qsfp56-dd-3-1", {}),
    ("flap-ring", "ring4", "flap", "spark02:p0", {}),
    ("link-down-ring", "ring4", "link-down", "spark02:p0", {}),
    ("drop-both", "star4", "drop", "spark03:p0@both,20%", {}),
    ("drop-rx", "star4", "drop", "spark02:p0@rx", {}),
    ("drop-lane-tx", "star4", "drop", "qsfp56-dd-4-1@tx", {}),
    ("drop-clsact-there", "star4", "drop", "spark01:p0@tx,10%",
     {"qdiscs": {"cx7-p0": [{"kind": "clsact"}]}}),
    ("drop-ring-link", "ring4", "drop", "spark03:p0--spark04:p1", {}),
]


def transcript(faults: ModuleType, topology: str, kind: str, target: str,
               state: dict[str, Any], lab_dir: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `faults.inject` then `faults.heal` said and ran on a paper lab."""
    info, _ = paper_lab(topology, lab_dir)
    kernel = FakeKernel(**state)
    install(mp, kernel, lab_dir)
    mp.setattr(registry, "load_lab", lambda name: info)
    fault = faults.inject(LAB, kind, target)
    injected, kernel.calls = kernel.calls, []
    healed = faults.heal(LAB)
    out = {"summary": fault.summary, "inject": injected, "heal": kernel.calls,
           "healed": [f.summary for f in healed], "left": faults.active_faults(LAB)}
    return json.loads(json.dumps(out).replace(str(lab_dir), "<lab>"))


@pytest.mark.parametrize(("topology", "kind", "target", "state"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_inject_and_heal_run_the_recorded_commands(
        topology: str, kind: str, target: str, state: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    from fabric.lab import faults

    case = request.node.callspec.id
    golden = json.loads(GOLDEN.read_text())[case]
    got = transcript(faults, topology, kind, target, state, tmp_path, monkeypatch)
    assert got == golden


def _record(module_file: str, only: list[str]) -> None:
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location("faults_under_record", module_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    out = json.loads(GOLDEN.read_text()) if only else {}
    for case_id, topology, kind, target, state in CASES:
        if only and case_id not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
            out[case_id] = transcript(module, topology, kind, target, state, Path(tmp), mp)
    GOLDEN.write_text(_dumps(out))


def _dumps(cases: dict[str, dict[str, Any]]) -> str:
    """commands.json with one command a line."""
    def value(v: Any) -> str:
        if isinstance(v, list) and v:
            return "[\n" + ",\n".join(f"   {json.dumps(c)}" for c in v) + "\n  ]"
        return json.dumps(v)

    return "{\n" + ",\n".join(
        f" {json.dumps(case)}: {{\n" + ",\n".join(
            f"  {json.dumps(k)}: {value(v)}" for k, v in sorted(t.items())) + "\n }"
        for case, t in sorted(cases.items())) + "\n}\n"


if __name__ == "__main__":
    _record(sys.argv[1], sys.argv[2:])
