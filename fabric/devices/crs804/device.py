"""The MikroTik CRS804-4DDQ-hRM behind the device contract (`fabric.devices.contract.Device`):
each step delegates to this package's modules over the RouterOS API (facts, snapshot, diff,
apply, lane status, restore). Other switch models on the same RouterOS and chip family reuse
it with their own platform data (`fabric.devices.crs812`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.contract import PushScope
from fabric.devices.crs804.apply_switch_config import apply_switch_config
from fabric.devices.crs804.backup_switch_config import backup_switch_config
from fabric.devices.crs804.diff import diff_switch
from fabric.devices.crs804.facts import collect_switch_facts
from fabric.devices.crs804.model import SwitchChanges
from fabric.devices.crs804.platform import MODEL
from fabric.devices.crs804.read_lane_status import read_lane_status
from fabric.devices.crs804.restore_switch_backup import restore_switch_backup
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.facts import SwitchFacts
from fabric.intent.model import Intent


class Crs804:
    """A RouterOS 7 switch on a Marvell Prestera chip, driven through its API."""

    role = "switch"
    platform = MODEL

    def get_facts(self, task: Task, intent: Intent, narrow: bool = False,
                  families: Collection[str] | None = None) -> Result:
        return collect_switch_facts(task, intent, narrow=narrow, families=families)

    def get_snapshot(self, task: Task, intent: Intent, export: bool = False) -> Result:
        return backup_switch_config(task, export=export, qos=intent.lossless)

    def compare(self, intent: Intent, facts: SwitchFacts, snap: SwitchSnapshot,
                scope: PushScope) -> SwitchChanges:
        ready = set(scope.ready) if scope.ready is not None else None
        return diff_switch(intent, facts, snap, qos_sparks=ready)

    def commit(self, task: Task, changes: SwitchChanges, snap: SwitchSnapshot) -> Result:
        return apply_switch_config(task, changeset=changes)

    def links_down(self, task: Task, names: tuple[str, ...],
                   wants: Mapping[str, Any] | None = None) -> Result:
        return read_lane_status(task, names)

    def verify(self, task: Task, intent: Intent, in_run: frozenset[str]) -> Result:
        """The cabled lanes not `link-ok` (the push cycle also plans the switch again: a
        change that did not stick shows there)."""
        sw = intent.switch
        lanes = tuple(lp.name for lp in sw.lanes if lp.cabled_to) if sw is not None else ()
        down = read_lane_status(task, lanes).result
        problems = [f"{lane}: not link-ok" for lane in down]
        return Result(host=task.host, result=problems, changed=False, failed=bool(problems))

    def backup_entry(self, intent: Intent, changes: SwitchChanges) -> dict[str, Any]:
        lanes = [lp.name for lp in intent.switch.lanes] if intent.switch else []
        return {"role": "switch", "lanes": lanes, "bridge": changes.bridge,
                "qos": intent.lossless}

    def rollback(self, task: Task, backup: SwitchSnapshot, entry: Mapping[str, Any]) -> Result:
        return restore_switch_backup(task, backup=backup, lanes=tuple(entry.get("lanes", ())),
                                     bridge=entry.get("bridge", "bridge"),
                                     qos=bool(entry.get("qos")))
