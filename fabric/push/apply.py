"""The push cycle: changeset (dry run) or lock → changeset → backup → apply → verify → roll back."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nornir.core import Nornir

from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.registry import SPARK
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.errors import InputError
from fabric.push import backup, rollback
from fabric.push.lock import host_locks
from fabric.push.model import ChangeSet
from fabric.push.runner import push_session, run_task
from fabric.push.verify import (
    LINK_WAIT_S,
    current_changes,
    the_switch,
    verify,
    wait_for_links,
    wait_for_training,
)
from fabric.target import Target

Progress = Callable[[str], None]


@dataclass
class PushOutcome:
    """What a push did; `exit_code` follows the CLI contract."""

    changeset: ChangeSet
    applied: bool = False
    run_id: str | None = None
    run_dir: Path | None = None
    apply_errors: dict[str, str] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)
    rolled_back: dict[str, list[str]] = field(default_factory=dict)
    rollback_errors: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0

    @property
    def exit_code(self) -> int:
        if self.problems or self.apply_errors or self.rollback_errors:
            return 1
        return 3 if self.changeset.errors or self.changeset.refused else 0


def scope(target: Target, hosts: list[str] | None) -> list[str]:
    """The hosts to push to: the topology's Sparks and switch, or `--hosts` (checked)."""
    intent = target.intent
    known = sorted(h for h in intent.cabled if intent.hosts[h].role in ("spark", "switch"))
    if hosts is None:
        return known
    unknown = sorted(set(hosts) - set(known))
    if unknown:
        raise InputError(f"--hosts: not in topology {intent.name}: {', '.join(unknown)} "
                         f"(known: {', '.join(known)})")
    return sorted(set(hosts))


def lock_keys(target: Target, hosts: list[str]) -> dict[str, str]:
    """A lock key per host: its management address (unique per real device)."""
    from fabric.remote.nornir_setup import make_nornir

    inv = make_nornir(target, hosts).inventory.hosts
    return {h: f"{inv[h].hostname}-{h}" if h in inv else h for h in hosts}


def push(target: Target, hosts: list[str] | None, apply: bool, workers: int,
         progress: Progress, adopt: bool = False, link_wait_s: float = LINK_WAIT_S
         ) -> PushOutcome:
    """Dry run (changeset only) or the whole cycle with `apply`. `adopt`: take over other
    definitions of the twins; `link_wait_s`: how long verification waits for links to train."""
    started = time.monotonic()
    chosen = scope(target, hosts)
    if not apply:
        with push_session(target, chosen, workers) as nr:
            changeset, _, _ = current_changes(target, chosen, workers, progress, nr, adopt)
        return PushOutcome(changeset, duration_s=time.monotonic() - started)
    run_id = backup.new_run_id()
    with (host_locks(backup.state_dir() / "locks", run_id, lock_keys(target, chosen)),
          push_session(target, chosen, workers) as nr):
        changeset, sparks, switch = current_changes(target, chosen, workers, progress, nr, adopt)
        out = PushOutcome(changeset, applied=True)
        if changeset.hosts_with_changes():
            _apply(target, changeset, sparks, switch, run_id, workers, progress, out, nr,
                   link_wait_s)
    out.duration_s = time.monotonic() - started
    return out


def _apply(target: Target, changeset: ChangeSet, sparks: dict[str, SparkSnapshot],
           switch: SwitchSnapshot | None, run_id: str, workers: int, progress: Progress,
           out: PushOutcome, nr: Nornir, link_wait_s: float) -> None:
    """Backup, apply, verify and (on failure) roll back, all over the run's sessions `nr`."""
    directory = backup.run_dir(run_id)
    out.run_id, out.run_dir = run_id, directory
    progress(f"run {run_id}: backing up to {directory}")
    manifest = _backup(target, changeset, sparks, switch, run_id, directory, nr)
    changed = manifest["hosts"]
    if changeset.switch is not None and changeset.switch.changes:
        progress(f"applying {changeset.switch.changes} changes to {changeset.switch.host}")
        _, errs = run_task(target, [changeset.switch.host], the_switch(target).commit, 1,
                           lambda _h: {"changes": changeset.switch, "snap": switch}, nornir=nr)
        out.apply_errors |= errs
    todo = sorted(h for h, p in changeset.sparks.items() if p.changes and not p.refused)
    if todo and not out.apply_errors:
        progress(f"applying changes to {len(todo)} Sparks ({workers} at a time)")
        _, errs = run_task(target, todo, SPARK.commit, workers, lambda h: {
            "changes": changeset.sparks[h], "snap": sparks[h]}, nornir=nr)
        out.apply_errors |= errs
    if not out.apply_errors:
        hosts = sorted(set(changeset.sparks) | _switch(changeset))
        out.problems = verify(target, changeset, hosts, workers, progress, nr, link_wait_s)
    status = "applied"
    if out.apply_errors or out.problems:
        progress("verification failed: rolling back every changed host")
        out.rolled_back, out.rollback_errors = rollback.restore(target, directory, manifest,
                                                                workers, nr)
        # the restored lane settings restart the same port groups: let them train again
        wait_for_links(target, changeset, sorted(out.rolled_back), workers, progress, nr,
                       link_wait_s)
        status = "rolled-back" if not out.rollback_errors else "rollback-failed"
    manifest |= {"status": status, "finished": _now(), "apply_errors": out.apply_errors,
                 "problems": out.problems, "rollback_errors": out.rollback_errors}
    manifest["hosts"] = changed
    backup.save_manifest(directory, manifest)


def _switch(changeset: ChangeSet) -> set[str]:
    return {changeset.switch.host} if changeset.switch is not None else set()


def _backup(target: Target, changeset: ChangeSet, sparks: dict[str, SparkSnapshot],
            switch: SwitchSnapshot | None, run_id: str, directory: Path, nr: Nornir
            ) -> dict[str, object]:
    """Write the backup of every host with changes; the manifest that rollback reads."""
    hosts: dict[str, dict[str, object]] = {}
    for host, sp in sorted(changeset.sparks.items()):
        if sp.changes and not sp.refused:
            backup.save_spark(directory, sparks[host])
            hosts[host] = SPARK.backup_entry(target.intent, sp)
    if changeset.switch is not None and changeset.switch.changes and switch is not None:
        device = the_switch(target)
        got, errs = run_task(target, [changeset.switch.host], device.get_snapshot, 1,
                             lambda _h: {"intent": target.intent, "export": True}, nornir=nr)
        snap = got.get(changeset.switch.host, switch)
        if errs:
            snap = SwitchSnapshot(switch.host, switch.rows, None,
                                  f"re-reading for /export failed: {errs[changeset.switch.host]}",
                                  switch.connected_interface)
        backup.save_switch(directory, snap, target.credentials.scrub)
        hosts[changeset.switch.host] = device.backup_entry(target.intent, changeset.switch)
    manifest: dict[str, object] = {"schema": "fabric.push-run/1", "run_id": run_id,
                                   "topology": changeset.topology, "lab": target.lab,
                                   "started": _now(), "status": "applying", "hosts": hosts}
    backup.save_manifest(directory, manifest)
    return manifest


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def rollback_run(target: Target, run_id: str, workers: int, progress: Progress
                 ) -> tuple[dict[str, list[str]], dict[str, str]]:
    """`fabric push rollback RUN_ID`: restore every host of that run from its backup."""
    directory, manifest = backup.load_manifest(run_id)
    hosts = sorted(manifest.get("hosts", {}))
    with host_locks(backup.state_dir() / "locks", f"rollback-{run_id}",
                    lock_keys(target, hosts)):
        progress(f"restoring {len(hosts)} hosts from {directory}")
        with push_session(target, hosts, workers) as nr:
            done, errors = rollback.restore(target, directory, manifest, workers, nr)
            twins, lanes, switch = rollback.restarted(manifest)
            wait_for_training(target, twins, lanes, switch, sorted(done), workers, progress,
                              nr, LINK_WAIT_S)
    manifest["rolled_back"] = _now()
    backup.save_manifest(directory, manifest)
    return done, errors
