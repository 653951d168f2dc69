"""Roll a push back: restore every host of a run from its backup (automatic or on demand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nornir.core import Nornir

from fabric.devices.crs804.device import Crs804
from fabric.devices.registry import SPARK, SwitchDevice, switch_device
from fabric.push import backup
from fabric.push.runner import run_task
from fabric.target import Target


def restore(target: Target, directory: Path, manifest: dict[str, Any], workers: int,
            nornir: Nornir | None = None) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Restore the hosts in the manifest; (host -> what was done, host -> why it failed)."""
    hosts: dict[str, Any] = manifest.get("hosts", {})
    sparks = sorted(h for h, v in hosts.items() if v.get("role") == "spark")
    switches = sorted(h for h, v in hosts.items() if v.get("role") == "switch")
    done: dict[str, list[str]] = {}
    errors: dict[str, str] = {}
    if sparks:
        snaps = {h: backup.load_spark(directory, h) for h in sparks}
        got, errs = run_task(target, sparks, SPARK.rollback, workers, lambda h: {
            "backup": snaps[h], "entry": hosts[h]}, nornir=nornir)
        done |= got
        errors |= errs
    if switches:
        ssnaps = {h: backup.load_switch(directory, h) for h in switches}
        got, errs = run_task(target, switches, _switch(target).rollback, 1, lambda h: {
            "backup": ssnaps[h], "entry": hosts[h]}, nornir=nornir)
        done |= got
        errors |= errs
    return done, errors


def restarted(manifest: dict[str, Any]) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...],
                                                  str | None]:
    """(Spark -> twins, lanes, switch) a restore of this run may restart: the twins it
    touched and every used lane of the switch (their settings are put back)."""
    hosts: dict[str, Any] = manifest.get("hosts", {})
    twins = {h: tuple(v.get("touched", ())) for h, v in hosts.items()
             if v.get("role") == "spark" and v.get("touched")}
    switch = next((h for h, v in hosts.items() if v.get("role") == "switch"), None)
    lanes = tuple(hosts[switch].get("lanes", ())) if switch else ()
    return twins, lanes, switch


def _switch(target: Target) -> SwitchDevice:
    """The target's switch device; a run's manifest from a target without one: the CRS804."""
    sw = target.intent.switch
    return switch_device(sw.model) if sw is not None else Crs804()
