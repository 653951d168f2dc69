"""Roll a push back: restore every host of a run from its backup (automatic or on demand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nornir.core import Nornir

from fabric.push import backup
from fabric.push.render import NETPLAN_PATH
from fabric.push.restore_spark_backup import restore_spark_backup
from fabric.push.restore_switch_backup import restore_switch_backup
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
        got, errs = run_task(target, sparks, restore_spark_backup, workers, lambda h: {
            "backup": snaps[h], "netdevs": tuple(hosts[h].get("touched", ())),
            "files": _files(hosts[h]), "rdma": tuple(hosts[h].get("rdma", ()))},
            nornir=nornir)
        done |= got
        errors |= errs
    if switches:
        ssnaps = {h: backup.load_switch(directory, h) for h in switches}
        got, errs = run_task(target, switches, restore_switch_backup, 1, lambda h: {
            "backup": ssnaps[h], "lanes": tuple(hosts[h].get("lanes", ())),
            "bridge": hosts[h].get("bridge", "bridge"), "qos": bool(hosts[h].get("qos"))},
            nornir=nornir)
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


def _files(entry: dict[str, Any]) -> tuple[str, ...]:
    """The files a run manages on a Spark (a run from before sysctl.d: its netplan file)."""
    return tuple(entry.get("files") or [entry.get("netplan_path", NETPLAN_PATH)])
