"""The DGX Spark behind the device contract (`fabric.devices.contract.Device`): each step
delegates to this package's modules (facts, snapshot, diff, apply, verify, restore)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.contract import PushScope
from fabric.devices.spark.apply_spark_config import apply_spark_config, tos_devices
from fabric.devices.spark.backup_spark_config import backup_spark_config
from fabric.devices.spark.diff import diff_spark
from fabric.devices.spark.facts import collect_spark_facts
from fabric.devices.spark.model import SparkChanges
from fabric.devices.spark.platform import NETPLAN_PATH, OTHER_FILES
from fabric.devices.spark.read_twin_carrier import read_twin_carrier
from fabric.devices.spark.render import spark_wants
from fabric.devices.spark.restore_spark_backup import restore_spark_backup
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.devices.spark.verify_spark_push import pingable, verify_spark_push
from fabric.facts import SparkFacts
from fabric.intent.model import Intent


class Spark:
    """A DGX Spark over SSH (exec channels): netplan, sysctl.d, runtime `ip`, lossless RoCE."""

    role = "spark"
    platform = "spark"

    def get_facts(self, task: Task, intent: Intent, narrow: bool = False,
                  families: Collection[str] | None = None) -> Result:
        return collect_spark_facts(task, intent, narrow=narrow, families=families)

    def get_snapshot(self, task: Task, intent: Intent, export: bool = False) -> Result:
        host = task.host.name
        return backup_spark_config(
            task, qos_netdevs=tuple(w.netdev for w in spark_wants(intent, host)),
            files=OTHER_FILES, rdma=tuple(i.rdma for i in intent.interfaces(host)))

    def compare(self, intent: Intent, facts: SparkFacts, snap: SparkSnapshot,
                scope: PushScope) -> SparkChanges:
        switch = intent.switch.host if intent.switch is not None else None
        return diff_spark(intent, facts, snap, scope.adopt,
                          switch_in_push=switch is not None and switch in scope.hosts)

    def commit(self, task: Task, changes: SparkChanges, snap: SparkSnapshot) -> Result:
        return apply_spark_config(task, changeset=changes, has_netplan=snap.has_netplan)

    def links_down(self, task: Task, names: tuple[str, ...],
                   wants: Mapping[str, Any] | None = None) -> Result:
        return read_twin_carrier(task, names, wants)

    def verify(self, task: Task, intent: Intent, in_run: frozenset[str]) -> Result:
        return verify_spark_push(task, pingable(intent, task.host.name, in_run))

    def backup_entry(self, intent: Intent, changes: SparkChanges) -> dict[str, Any]:
        return {"role": "spark", "touched": list(changes.touched), "netplan_path": NETPLAN_PATH,
                "files": [f.path for f in changes.files], "rdma": sorted(tos_devices(changes))}

    def rollback(self, task: Task, backup: SparkSnapshot, entry: Mapping[str, Any]) -> Result:
        return restore_spark_backup(task, backup=backup, netdevs=tuple(entry.get("touched", ())),
                                    files=managed_files(entry), rdma=tuple(entry.get("rdma", ())))


def managed_files(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """The files a run manages on a Spark (a run from before sysctl.d: its netplan file)."""
    return tuple(entry.get("files") or [entry.get("netplan_path", NETPLAN_PATH)])
