"""A support bundle: one .tar.gz with what fabric saw, for a vendor ticket.

Inside `fabric-bundle-<topology>-<UTC time>/`: `raw/<spark>.txt` (each Spark's whole facts
batch transcript: every command's output and exit status), `raw/<switch>.export.rsc`
(RouterOS `/export terse`, or why it could not be taken), `facts.json` (the parsed facts of
the same transcripts), `reports/` (the last validate and doctor reports from the state
directory, where there are some), `versions.json` (toolkit, Python, platform, the topology and
its intent hash) and `errors.json` (hosts that could not be read, and why). Every text goes
through `fabric.redact` with the target's secrets before it is written.
"""

from __future__ import annotations

import io
import json
import platform
import sys
import tarfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nornir.core.task import Result, Task

from fabric import __version__
from fabric.devices.crs804.backup_switch_config import backup_switch_config
from fabric.devices.crs804.facts import collect_switch_facts
from fabric.devices.spark.commands import render_script
from fabric.devices.spark.facts import build_from_transcript, run_batch, spark_batch
from fabric.facts import Facts, SparkFacts, SwitchFacts, facts_to_json
from fabric.gate import default_report_path
from fabric.redact import redact
from fabric.remote.exec import spark_session
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import run
from fabric.target import Target

#: The saved reports a bundle carries, by file name in the state directory.
REPORTS = ("last-report.json", "last-doctor.json")


@dataclass
class Gathered:
    """What the bundle saw: raw text per file name, parsed facts, hosts that failed."""

    raw: dict[str, str] = field(default_factory=dict)
    sparks: dict[str, SparkFacts] = field(default_factory=dict)
    switch: SwitchFacts | None = None
    errors: dict[str, str] = field(default_factory=dict)


def bundle_host(task: Task, target: Target) -> Result:
    """One host's raw outputs and parsed facts: a Spark's whole facts batch, or the switch's
    facts and `/export terse`. Read-only."""
    intent = target.intent
    name = task.host.name
    if task.host.get("role") == "switch":
        facts = collect_switch_facts(task, intent).result
        snap = backup_switch_config(task, export=True).result
        export = snap.export if snap.export is not None else f"# {snap.export_error}\n"
        return Result(host=task.host, result=({f"{name}.export.rsc": export}, facts))
    twins, used, commands = spark_batch(intent, name)
    conn = spark_session(task)
    raw = run_batch(conn, render_script(commands), 60.0)
    facts = build_from_transcript(intent, name, twins, used, commands, raw)
    return Result(host=task.host, result=({f"{name}.txt": raw}, facts))


def gather(target: Target) -> Gathered:
    """Read every cabled Spark and the switch at once; a host that fails is recorded."""
    intent = target.intent
    hosts = sorted(h for h in intent.cabled if intent.hosts[h].role in ("spark", "switch"))
    nr = make_nornir(target, hosts)
    try:
        got, failed = run(nr, bundle_host, target=target, name="bundle", addressed=True,
                          scrub=target.credentials.scrub)
    finally:
        nr.close_connections(on_good=True, on_failed=True)
    out = Gathered(errors=dict(failed))
    for host, (raw, facts) in sorted(got.items()):
        out.raw |= raw
        if isinstance(facts, SwitchFacts):
            out.switch = facts
        else:
            out.sparks[host] = facts
    return out


def _versions(target: Target) -> dict[str, Any]:
    return {"fabric": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "topology": target.intent.name,
            "intent_hash": target.intent.intent_hash, "lab": target.lab}


def _add(tar: tarfile.TarFile, name: str, text: str, mtime: float) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
    tar.addfile(info, io.BytesIO(data))


def bundle_files(target: Target, seen: Gathered) -> dict[str, str]:
    """Every file of the bundle by its path inside it, secrets masked."""
    secrets = target.credentials.secrets()
    files = {f"raw/{n}": t for n, t in seen.raw.items()}
    facts = Facts(collected=datetime.now(UTC).isoformat(timespec="seconds"),
                  topology=target.intent.name, sparks=seen.sparks, switch=seen.switch,
                  errors=seen.errors)
    files["facts.json"] = facts_to_json(facts)
    for name in REPORTS:
        path = default_report_path(target.lab).with_name(name)
        if path.exists():
            files[f"reports/{name}"] = path.read_text()
    files["versions.json"] = json.dumps(_versions(target), indent=2) + "\n"
    files["errors.json"] = json.dumps(seen.errors, indent=2, sort_keys=True) + "\n"
    return {name: redact(text, secrets) for name, text in files.items()}


def write_bundle(target: Target, out: Path | None = None) -> tuple[Path, Gathered]:
    """Gather and write the bundle (default: ./fabric-bundle-<topology>-<time>.tar.gz)."""
    seen = gather(target)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    top = f"fabric-bundle-{target.intent.name}-{stamp}"
    path = out or Path(f"{top}.tar.gz")
    now = time.time()
    with tarfile.open(path, "w:gz") as tar:
        for name, text in sorted(bundle_files(target, seen).items()):
            _add(tar, f"{top}/{name}", text, now)
    return path, seen
