"""Run directories: the backup of every host a push changes, and the run's manifest.

Layout (the state directory, `fabric.statedir.state_dir`):
`runs/<RUN_ID>/manifest.json`, `runs/<RUN_ID>/<host>/…` (Spark: `netplan/*.yaml`, the other
managed files that existed under `files/<their path>` (e.g. `files/etc/sysctl.d/40-fabric.conf`),
`ip-addr.json`, `ip-link.json`, `ip-route.json`, `snapshot.json`; switch: `routeros.json`,
`export.rsc` or `export-error.txt`), `locks/<address>.lock`.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.errors import InputError
from fabric.statedir import state_dir as state_dir  # push.apply: backup.state_dir()


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def run_dir(run_id: str) -> Path:
    return state_dir() / "runs" / run_id


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(text)
    path.chmod(0o600)


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def save_spark(directory: Path, snap: SparkSnapshot) -> None:
    """The Spark's netplan and managed files and `ip -j` snapshot, readable as plain files too
    (`snapshot.json` is what rollback reads)."""
    host = directory / snap.host
    for path, content in snap.netplan.items():
        _write(host / "netplan" / Path(path).name, content)
    for path, content in snap.files.items():
        _write(host / "files" / path.lstrip("/"), content)
    _write(host / "ip-addr.json", _dump(snap.ip_addr))
    _write(host / "ip-link.json", _dump(snap.ip_link))
    _write(host / "ip-route.json", _dump(snap.ip_route))
    _write(host / "snapshot.json", _dump(asdict(snap)))


def save_switch(directory: Path, snap: SwitchSnapshot, scrub: Any) -> None:
    """The JSON snapshot of every touched RouterOS item, and `/export terse` (or why not)."""
    host = directory / snap.host
    _write(host / "routeros.json", _dump(asdict(snap)))
    if snap.export is not None:
        _write(host / "export.rsc", scrub(snap.export))
    else:
        _write(host / "export-error.txt", scrub(snap.export_error or "not taken") + "\n")


def save_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    _write(directory / "manifest.json", _dump(manifest))


def load_manifest(run_id: str) -> tuple[Path, dict[str, Any]]:
    """The run directory and manifest of RUN_ID; InputError (exit 2) if there is none."""
    directory = run_dir(run_id)
    try:
        data: dict[str, Any] = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        raise InputError(f"no push run {run_id!r} under {state_dir() / 'runs'}") from None
    return directory, data


def load_spark(directory: Path, host: str) -> SparkSnapshot:
    data = json.loads((directory / host / "snapshot.json").read_text())
    return SparkSnapshot(**data)


def load_switch(directory: Path, host: str) -> SwitchSnapshot:
    data = json.loads((directory / host / "routeros.json").read_text())
    return SwitchSnapshot(**data)
