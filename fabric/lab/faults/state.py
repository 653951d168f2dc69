"""`faults.json` in the lab's directory: the faults injected and not healed yet, oldest first.

The file is `{"format": FORMAT, "faults": [Fault.to_json(), ...]}`. A lab built before the
undo records were typed holds a bare list of untyped records: an empty one reads as no
faults, any other is a RecordError that says what to do, not a guess at what it meant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabric.lab.faults.codec import RecordError
from fabric.lab.faults.records import Fault
from fabric.lab.host import labfiles
from fabric.lab.lifecycle import registry

FORMAT = "fabric.lab.faults/2"


def faults_path(lab: str) -> Path:
    return registry.lab_dir(lab) / "faults.json"


def active_faults(lab: str) -> list[Fault]:
    """The faults injected into `lab` and not healed yet, oldest first."""
    path = faults_path(lab)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return faults_from_json(data, path)


def faults_from_json(data: Any, path: Path | str = "faults.json") -> list[Fault]:
    """The faults of a `faults.json` document; RecordError naming the file and the field."""
    if data == []:  # an older fabric's file once every fault was healed: nothing to undo
        return []
    if isinstance(data, list):
        raise RecordError(
            f"{path} holds fault records of an older fabric (untyped undo records), which this "
            "one cannot heal: undo those faults by hand, or rebuild the lab (fabric lab down, "
            "fabric lab up), then remove the file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise RecordError(f"{path}: not a fault record of format {FORMAT} (found {found!r})")
    items = data.get("faults")
    if not isinstance(items, list):
        raise RecordError(f"{path}: \"faults\" must be a list")
    try:
        return [Fault.from_json(f, f"faults[{i}]") for i, f in enumerate(items)]
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def faults_to_json(faults: list[Fault]) -> dict[str, Any]:
    return {"format": FORMAT, "faults": [f.to_json() for f in faults]}


def save_faults(lab: str, faults: list[Fault]) -> None:
    labfiles.write_json(faults_path(lab), faults_to_json(faults))
