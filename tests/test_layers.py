"""The package import graph: no cycles, and each layer imports only the layers below it.

cli -> features (collect, push, probes, launch, plan, validate, gate, lab, bundle, watch) ->
devices (one package per device behind one contract) -> core (remote, intent, facts, report,
parsers, ...). validators judge facts against the intent: they import intent and facts only (plus
the result record they return and the input error type).
Every import counts, lazy and TYPE_CHECKING ones too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
FEATURES = {"collect", "push", "probes", "launch", "plan", "validate", "gate", "lab", "bundle",
            "watch"}
#: Between the features and the core: features may import devices, devices the core only.
DEVICES = {"devices"}
CORE = {"remote", "intent", "facts", "facts_builder", "report", "parsers", "target", "errors",
        "redact", "credentials", "neighbors", "fingerprint", "draw", "statedir", "collector"}
#: What validators may import: the intent, the facts, the record they return, input errors.
VALIDATOR_IMPORTS = ("fabric.intent", "fabric.facts", "fabric.report.model", "fabric.errors")


def _unit(module: str) -> str | None:
    """The layer unit of a module: `fabric.<package or module>`, `validators`, or None."""
    parts = module.split(".")
    if parts[0] == "validators":
        return "validators"
    if parts[0] != "fabric" or len(parts) == 1 or parts[1].startswith("__"):
        return None
    return parts[1]


def _imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, file) for every absolute import in the package."""
    out = []
    for top in ("fabric", "validators"):
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    out += [(module, a.name, str(path.relative_to(ROOT))) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    out.append((module, node.module, str(path.relative_to(ROOT))))
                    out += [(module, f"{node.module}.{a.name}", str(path.relative_to(ROOT)))
                            for a in node.names]
    return out


def _edges() -> dict[tuple[str, str], set[str]]:
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for src, dst, path in _imports():
        a, b = _unit(src), _unit(dst)
        if a and b and a != b:
            edges[(a, b)].add(path)
    return edges


def test_every_unit_has_a_layer() -> None:
    units = {u for edge in _edges() for u in edge}
    stray = units - FEATURES - DEVICES - CORE - {"cli", "validators"}
    assert not stray, f"put {sorted(stray)} in a layer (tests/test_layers.py)"


def test_no_import_cycles() -> None:
    edges = _edges()
    graph = nx.DiGraph(list(edges))
    cycles = sorted(nx.simple_cycles(graph), key=len)
    described = [" -> ".join([*c, c[0]]) + "  (" + "; ".join(
        f"{c[i]}->{c[(i + 1) % len(c)]}: {', '.join(sorted(edges[(c[i], c[(i + 1) % len(c)])]))}"
        for i in range(len(c))) + ")" for c in cycles[:5]]
    assert not cycles, f"{len(cycles)} import cycles, e.g.:\n" + "\n".join(described)


def test_core_imports_no_feature_and_features_no_cli() -> None:
    wrong = [f"{a} -> {b} ({', '.join(sorted(files))})" for (a, b), files in _edges().items()
             if (a in CORE and (b in FEATURES or b in ("cli", "validators")))
             or (a in FEATURES and b == "cli")]
    assert not wrong, "layer violations:\n" + "\n".join(sorted(wrong))


def test_devices_import_the_core_only_and_the_core_no_device() -> None:
    wrong = [f"{a} -> {b} ({', '.join(sorted(files))})" for (a, b), files in _edges().items()
             if (a in DEVICES and b not in CORE) or (a in CORE and b in DEVICES)]
    assert not wrong, "layer violations:\n" + "\n".join(sorted(wrong))


def test_validators_import_intent_and_facts_only() -> None:
    wrong = sorted({f"{path}: {dst}" for src, dst, path in _imports()
                    if src.startswith("validators") and dst.startswith("fabric")
                    and not dst.startswith(VALIDATOR_IMPORTS)})
    assert not wrong, "validators import beyond intent/facts:\n" + "\n".join(wrong)


def test_target_is_free_of_the_cli_and_the_lab() -> None:
    found = {dst for src, dst, _ in _imports() if src == "fabric.target"}
    assert not {d for d in found if d.split(".")[0] == "typer" or d.startswith("fabric.lab")}


def test_the_graph_is_read() -> None:
    """Guards the scan itself: known edges must show up, or the other tests prove nothing."""
    edges = _edges()
    assert ("cli", "push") in edges and ("validators", "intent") in edges
    assert ("push", "remote") in edges
    assert ("push", "devices") in edges and ("devices", "intent") in edges
