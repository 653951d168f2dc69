"""Options and helpers shared by the command groups."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from fabric.errors import InputError
from fabric.target import Target, files_target

if TYPE_CHECKING:
    from fabric.intent.model import Intent

LabOpt = typer.Option(None, "--lab", help="Work on lab NAME (its inventory and topology).")
InventoryOpt = typer.Option(None, "--inventory", "-i", help="Nornir inventory directory.")
TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology name or file.")
TopologyArg = typer.Argument(None, help="A topology name in topologies/ or a path to a YAML "
                             "file (omit with --lab).")


def resolve_target(lab: str | None, inventory: Path | None, topology: str | None) -> Target:
    """Resolve the common `--lab` / `-i` / `-t` options into a Target."""
    if lab is None:
        return files_target(topology, inventory)
    if inventory is not None or topology is not None:
        raise InputError("--lab already names an inventory and a topology; "
                         "drop -i/-t or drop --lab")
    from fabric.lab.lifecycle.registry import lab_target

    return lab_target(lab)


def write_output(text: str, output: Path | None) -> None:
    """Machine-readable output goes to the named file, or stdout."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        output.write_text(text)


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"


def intent_for(topology: str | None, inventory: Path | None, lab: str | None) -> Intent:
    """The intent named by TOPOLOGY (+ -i) or by `--lab NAME` (its own copy and inventory)."""
    if lab is not None:
        if topology is not None or inventory is not None:
            raise InputError("--lab already names a topology and an inventory; drop TOPOLOGY "
                             "and -i, or drop --lab")
        return resolve_target(lab, None, None).intent
    if topology is None:
        raise InputError("name a TOPOLOGY (a name in topologies/ or a file), or --lab NAME")
    from fabric.intent.build import load_intent

    return load_intent(topology, inventory)
