"""Where topologies and the inventory live: a name in topologies/ or a path."""

from __future__ import annotations

import os
from pathlib import Path

from fabric.errors import InputError, InputProblem

REPO_ROOT = Path(__file__).resolve().parents[2]


def topology_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("FABRIC_TOPOLOGIES", "").split(":") if p]
    return [*dirs, Path.cwd() / "topologies", REPO_ROOT / "topologies"]


def resolve_topology(name: str | Path) -> Path:
    """A topology name (`star4`) or a path to a YAML file."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise InputError(InputProblem(str(path), None, "TOPOLOGY", "no such topology file"))
        return path
    for d in topology_dirs():
        candidate = d / f"{name}.yaml"
        if candidate.is_file():
            return candidate
    known = sorted({p.stem for d in topology_dirs() if d.is_dir() for p in d.glob("*.yaml")})
    if not known:
        raise InputError(InputProblem(str(name), None, "TOPOLOGY",
                                      "unknown topology; no topologies/ here: pass a YAML "
                                      "file, or set FABRIC_TOPOLOGIES to a directory"))
    raise InputError(InputProblem(str(name), None, "TOPOLOGY",
                                  f"unknown topology; known: {', '.join(known)}"))


def default_inventory() -> Path:
    env = os.environ.get("FABRIC_INVENTORY")
    if env:
        return Path(env)
    local = Path.cwd() / "inventory"
    return local if (local / "hosts.yaml").exists() else REPO_ROOT / "inventory"
