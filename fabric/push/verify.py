"""Verification after a push: facts again (nothing left to change, lanes up) and pings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from nornir.core import Nornir

from fabric.collect import collect_facts
from fabric.push.diff import plan_push
from fabric.push.model import NetdevWant, PushPlan
from fabric.push.probe import SparkSnapshot, SwitchSnapshot
from fabric.push.render import OTHER_FILES
from fabric.push.runner import run_task
from fabric.target import Target
from fabric.tasks.backup_spark_config import backup_spark_config
from fabric.tasks.backup_switch_config import backup_switch_config
from fabric.tasks.verify_spark_push import verify_spark_push


def snapshots(target: Target, hosts: list[str], workers: int, nornir: Nornir | None = None
              ) -> tuple[dict[str, SparkSnapshot], SwitchSnapshot | None, dict[str, str]]:
    """Read-only snapshots of `hosts` (Sparks and switch); errors per host."""
    intent = target.intent
    switch = intent.switch.host if intent.switch else None
    sparks = [h for h in hosts if h != switch]
    qos = {h: tuple(w.netdev for w in _wants(target, h)) for h in sparks}
    got, errors = run_task(target, sparks, backup_spark_config, workers,
                           lambda h: {"qos_netdevs": qos[h], "files": OTHER_FILES},
                           nornir=nornir)
    snap: SwitchSnapshot | None = None
    if switch in hosts and switch is not None:
        sw, sw_err = run_task(target, [switch], backup_switch_config, 1, nornir=nornir)
        errors |= sw_err
        snap = sw.get(switch)
    return got, snap, errors


def _wants(target: Target, host: str) -> tuple[NetdevWant, ...]:
    from fabric.push.render import spark_wants

    return spark_wants(target.intent, host)


def current_plan(target: Target, hosts: list[str], workers: int,
                 progress: Callable[[str], None], nornir: Nornir | None = None
                 ) -> tuple[PushPlan, dict[str, SparkSnapshot], SwitchSnapshot | None]:
    """Collect facts and snapshots of `hosts` and compute intent minus facts."""
    progress(f"collecting facts from {len(hosts)} hosts")
    facts = collect_facts(target, hosts, nornir=nornir)
    ok = [h for h in hosts if h not in facts.errors]
    sparks, switch, errors = snapshots(target, ok, workers, nornir)
    if errors:
        facts = replace(facts, errors={**facts.errors, **errors})
    return plan_push(target.intent, facts, sparks, switch, hosts), sparks, switch


def verify(target: Target, plan: PushPlan, hosts: list[str], workers: int,
           progress: Callable[[str], None], nornir: Nornir | None = None
           ) -> dict[str, list[str]]:
    """Problems per host after applying `plan` (empty: verified), over `nornir`'s sessions."""
    after, _, _ = current_plan(target, hosts, workers, progress, nornir)
    problems: dict[str, list[str]] = {h: [f"unreachable after apply: {why}"]
                                      for h, why in after.errors.items()}
    for host, sp in after.sparks.items():
        if sp.changes:
            left = [f"write {f.path}" for f in sp.changed_files] + list(sp.commands)
            problems.setdefault(host, []).append(
                f"{sp.changes} planned changes did not stick: {'; '.join(left)}")
    if after.switch is not None and after.switch.changes:
        problems.setdefault(after.switch.host, []).append(
            "planned changes did not stick: " + "; ".join(str(c) for c in after.switch.calls))
    progress("verifying twins (link, MTU, addresses) and pinging peers")
    in_run = set(plan.sparks)
    wants = {h: _pingable(target, h, in_run) for h in plan.sparks}
    results, errors = run_task(target, sorted(plan.sparks), verify_spark_push, workers,
                               lambda h: {"wants": wants[h]}, nornir=nornir)
    for host, why in errors.items():
        problems.setdefault(host, []).append(f"verification failed to run: {why}")
    for host, found in results.items():
        if found:
            problems.setdefault(host, []).extend(found)
    return problems


def _pingable(target: Target, host: str, in_run: set[str]) -> tuple[NetdevWant, ...]:
    """Wants of `host`; a peer outside this run is not pinged (it may not be configured)."""
    intent = target.intent
    owner = {str(i.address.ip): i.host for i in intent.interfaces()}
    out = []
    for w in _wants(target, host):
        if w.peer_address and owner.get(w.peer_address) not in in_run:
            w = NetdevWant(w.netdev, w.mtu, w.addresses, w.link_id, None)
        out.append(w)
    return tuple(out)
