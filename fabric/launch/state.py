"""The local record of a started launch: run id, nodes and pids, containers, engine arguments,
forced or not. `fabric launch stop` stops exactly the processes and containers it names; it
lives next to the gate's report in the state directory (`launch.json`, per lab
`labs/<lab>/launch.json`)."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fabric.errors import InputError
from fabric.statedir import state_dir

SCHEMA = "fabric.launch/1"
STATE_NAME = "launch.json"
#: Where a launch's scripts, logs and pid files live on every node (`<root>/<run id>/`).
REMOTE_ROOT = "/var/tmp/fabric-launch"
#: Set in every launched process's environment; `stop` only kills processes that carry it.
RUN_ID_VAR = "FABRIC_LAUNCH_RUN_ID"
#: The label every launched container carries: the launch's run id (`manual` when a script is
#: run by hand). `stop` stops a recorded container name only with its run's label.
RUN_LABEL = "fabric.launch.run-id"


@dataclass(frozen=True)
class LaunchRecord:
    """A started launch: which processes (session leader pid per node) and containers (name per
    node) belong to it, and what it was started with. `env`: the `--env` pairs; `stop` runs
    with them, so it finds the same `docker` and `ray` the launch found."""

    run_id: str
    engine: str
    topology: str
    intent_hash: str
    lab: str | None
    forced: bool
    started: str
    run_dir: str
    pids: dict[str, int] = field(default_factory=dict)
    schema: str = SCHEMA
    containers: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    preset: str | None = None
    engine_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def new_run_id(now: datetime | None = None) -> str:
    """`20261130T010203Z-1a2b`: sortable, and unique enough to name a run directory."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(2)}"


def remote_run_dir(run_id: str) -> str:
    return f"{REMOTE_ROOT}/{run_id}"


def launch_state_path(lab: str | None = None) -> Path:
    """`<state>/launch.json`, or `<state>/labs/<lab>/launch.json` for a lab."""
    root = state_dir()
    return (root / "labs" / lab / STATE_NAME) if lab else root / STATE_NAME


def save_record(record: LaunchRecord, path: Path) -> None:
    """Write the record atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(record), indent=2) + "\n")
    os.replace(tmp, path)


def load_record(path: Path) -> LaunchRecord | None:
    """The recorded launch, None when there is none; InputError when the file is corrupt."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable launch record: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputError(f"{path}: not a {SCHEMA} launch record")
    try:
        return LaunchRecord(**{
            **data, "pids": {str(h): int(p) for h, p in data["pids"].items()},
            "containers": {str(h): str(n) for h, n in data.get("containers", {}).items()},
            "engine_args": [str(a) for a in data.get("engine_args", [])],
            "env": {str(k): str(v) for k, v in data.get("env", {}).items()}})
    except (TypeError, KeyError, ValueError) as exc:
        raise InputError(f"{path}: bad launch record: {exc}") from None


def refuse_second_launch(lab: str | None) -> None:
    """InputError when a launch is already recorded (for this lab): stop it first."""
    path = launch_state_path(lab)
    record = load_record(path)
    if record is not None:
        raise InputError(f"a launch is already recorded in {path}: run {record.run_id} "
                         f"({record.engine} on {', '.join(sorted(record.pids))}); "
                         "`fabric launch stop` it first")
