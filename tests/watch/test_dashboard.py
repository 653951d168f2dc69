"""The shipped Grafana dashboard queries only metrics watch exports (or their _total
counters), and every query is valid PromQL to promtool."""

from __future__ import annotations

import json
import re
import subprocess
from importlib import resources
from pathlib import Path

from fabric.intent.build import load_intent
from fabric.watch.metrics import cycle_metrics
from fabric.watch.optics import gpu_metrics, switch_metrics
from fabric.watch.readings import SwitchReading
from tests.conftest import INVENTORY
from tests.watch.prom import tool


def _exported() -> set[str]:
    intent = load_intent("star4", INVENTORY)
    switch = SwitchReading("crs804", {}, {})
    fams = [*cycle_metrics(intent, {}, {}, 0.0, 15.0, 0.0),
            *switch_metrics(intent, {"crs804": switch}), *gpu_metrics({})]
    names = {f.name for f in fams} | {f.name + "_total" for f in fams if f.type == "counter"}
    return names | {"fabric_gate_drift"}


def _exprs() -> list[str]:
    dash = json.loads(resources.files("fabric.watch").joinpath("grafana.json").read_text())
    return [t["expr"] for p in dash["panels"] for t in p["targets"]]


def test_every_query_names_exported_metrics() -> None:
    exported = _exported()
    used: set[str] = set()
    for expr in _exprs():
        for pattern in re.findall(r'__name__=~"([^"]+)"', expr):  # every alternative exists
            head, alts, tail = re.fullmatch(r"(.*)\((.*)\)(.*)", pattern).groups()  # type: ignore[union-attr]
            used |= {f"{head}{alt}{tail}" for alt in alts.split("|")}
        used |= set(re.findall(r"\bfabric_[a-z0-9_]+\b(?![(|])", re.sub(r'"[^"]*"', "", expr)))
    assert used and used <= exported, sorted(used - exported)


def test_every_query_is_valid_promql(tmp_path: Path) -> None:
    """promtool parses each query as a recording rule's expression (`check rules`)."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:q{i}", "expr": e} for i, e in enumerate(_exprs())]}]}
    (tmp_path / "q.yml").write_text(json.dumps(rules))
    proc = subprocess.run([tool("promtool"), "check", "rules", "q.yml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(_exprs())} rules found" in proc.stdout
