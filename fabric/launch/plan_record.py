"""The launch's output directory: the rendered scripts, and `plan.json`, the launch plan
(topology, intent, engine, ranks, environment, container, engine arguments) as rendered."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from fabric.launch.spec import LaunchSpec

PLAN_NAME = "plan.json"


def write_scripts(out: Path, files: Mapping[str, str]) -> None:
    """Write the rendered files into `out` (created); the `.sh` scripts executable."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = out / name
        path.write_text(text)
        if name.endswith(".sh"):
            path.chmod(0o755)


def record_plan(out: Path, spec: LaunchSpec, engine: str, *, tp: int, pp: int,
                image: str | None, names: Mapping[str, str], preset: str | None,
                engine_args: Sequence[str], front: str | None) -> Path:
    """Write `out/plan.json`, the launch plan; its path. `front` is for `dp` only."""
    path = out / PLAN_NAME
    path.write_text(json.dumps(
        {"topology": spec.topology, "intent_hash": spec.intent_hash, "engine": engine,
         "entry": spec.entry, "master_addr": spec.master_addr, "tp": tp, "pp": pp,
         "ranks": [r.__dict__ for r in spec.ranks],
         "env": [v.__dict__ for v in spec.env],
         "container": {"image": image, "names": dict(names)} if image else None,
         "preset": preset, "engine_args": list(engine_args),
         "front": front if engine == "dp" else None}, indent=2) + "\n")
    return path
