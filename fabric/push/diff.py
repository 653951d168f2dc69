"""Intent minus facts: exactly what `push` would change, per host. Nothing else is applied.
Each device plans its own half through the device contract (`fabric.devices.contract`)."""

from __future__ import annotations

from dataclasses import replace

from fabric.devices.contract import PushScope
from fabric.devices.crs804.model import SwitchChanges
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.registry import SPARK, switch_device
from fabric.devices.spark.model import SparkChanges
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.facts import Facts
from fabric.intent.model import Intent
from fabric.push.model import ChangeSet


def diff_push(intent: Intent, facts: Facts, sparks: dict[str, SparkSnapshot],
              switch: SwitchSnapshot | None, hosts: list[str], adopt: bool = False) -> ChangeSet:
    """The changeset for `hosts`: hosts without facts or snapshot land in `errors`. `adopt`: take
    over other definitions of the twins (backed up, then removed) instead of refusing.

    Lossless (topology `qos: lossless`) is planned per cable, both ends or neither: a lane
    gets the switch's port QoS only where its Spark is in this push and takes its half."""
    errors = dict(facts.errors)
    scope = PushScope(frozenset(hosts), adopt)
    spark_sets: dict[str, SparkChanges] = {}
    switch_set: SwitchChanges | None = None
    switch_host = intent.switch.host if intent.switch is not None else None
    for host in (h for h in hosts if h not in errors and h != switch_host):
        sf, snap = facts.sparks.get(host), sparks.get(host)
        if sf is None or snap is None:
            errors[host] = "no facts"
        else:
            spark_sets[host] = SPARK.compare(intent, sf, snap, scope)
    if intent.switch is not None and switch_host in hosts and switch_host not in errors:
        if facts.switch is None or switch is None:
            errors[intent.switch.host] = "no switch facts"
        else:
            ready = frozenset(h for h, p in spark_sets.items() if not p.refused)
            switch_set = switch_device(intent.switch.model).compare(
                intent, facts.switch, switch, replace(scope, ready=ready))
    return ChangeSet(intent.name, spark_sets, switch_set, errors)
