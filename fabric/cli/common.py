"""Options and helpers shared by the command groups."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

TopologyArg = typer.Argument(..., help="A topology name in topologies/ or a path to a YAML file.")


def write_output(text: str, output: Path | None) -> None:
    """Machine-readable output goes to the named file, or stdout."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        output.write_text(text)


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"
