"""Verification after a push: facts again (nothing left to change, lanes up) and pings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from nornir.core import Nornir

from fabric.collect.gather import collect_facts
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.registry import SPARK, SwitchDevice, switch_device
from fabric.devices.spark.apply_spark_config import runs_netplan_apply
from fabric.devices.spark.model import NetdevWant
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.push.diff import diff_push
from fabric.push.model import ChangeSet
from fabric.push.runner import run_task
from fabric.target import Target

#: How long verification waits for restarted links to train (a 200G PAM4 lane takes seconds).
LINK_WAIT_S = 60.0
LINK_POLL_S = 0.5
LINK_WAIT_REPORT_S = 5.0


def snapshots(target: Target, hosts: list[str], workers: int, nornir: Nornir | None = None
              ) -> tuple[dict[str, SparkSnapshot], SwitchSnapshot | None, dict[str, str]]:
    """Read-only snapshots of `hosts` (Sparks and switch); errors per host."""
    intent = target.intent
    switch = intent.switch.host if intent.switch else None
    sparks = [h for h in hosts if h != switch]
    got, errors = run_task(target, sparks, SPARK.get_snapshot, workers,
                           lambda _h: {"intent": intent}, nornir=nornir)
    snap: SwitchSnapshot | None = None
    if switch in hosts and switch is not None:
        sw, sw_err = run_task(target, [switch], the_switch(target).get_snapshot, 1,
                              lambda _h: {"intent": intent}, nornir=nornir)
        errors |= sw_err
        snap = sw.get(switch)
    return got, snap, errors


def the_switch(target: Target) -> SwitchDevice:
    """The device that drives the target's switch (by its inventory model)."""
    assert target.intent.switch is not None
    return switch_device(target.intent.switch.model)


def current_changes(target: Target, hosts: list[str], workers: int,
                 progress: Callable[[str], None], nornir: Nornir | None = None,
                 adopt: bool = False
                 ) -> tuple[ChangeSet, dict[str, SparkSnapshot], SwitchSnapshot | None]:
    """Collect facts and snapshots of `hosts` and compute intent minus facts."""
    progress(f"collecting facts from {len(hosts)} hosts")
    facts = collect_facts(target, hosts, nornir=nornir)
    ok = [h for h in hosts if h not in facts.errors]
    sparks, switch, errors = snapshots(target, ok, workers, nornir)
    if errors:
        facts = replace(facts, errors={**facts.errors, **errors})
    return diff_push(target.intent, facts, sparks, switch, hosts, adopt), sparks, switch


def verify(target: Target, changeset: ChangeSet, hosts: list[str], workers: int,
           progress: Callable[[str], None], nornir: Nornir | None = None,
           link_wait_s: float = LINK_WAIT_S) -> dict[str, list[str]]:
    """Problems per host after applying `changeset` (empty: verified), over `nornir`'s sessions.

    Links the push may have restarted are given `link_wait_s` to train before anything is
    judged, so a slow 200G lane never causes a rollback (which would bounce it again)."""
    hosts = [h for h in hosts if not (h in changeset.sparks and changeset.sparks[h].refused)]
    wait_for_links(target, changeset, hosts, workers, progress, nornir, link_wait_s,
                   configured=True)
    after, _, _ = current_changes(target, hosts, workers, progress, nornir)
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
    in_run = frozenset(h for h, p in changeset.sparks.items() if not p.refused)
    results, errors = run_task(target, sorted(in_run), SPARK.verify, workers,
                               lambda _h: {"intent": target.intent, "in_run": in_run},
                               nornir=nornir)
    for host, why in errors.items():
        problems.setdefault(host, []).append(f"verification failed to run: {why}")
    for host, found in results.items():
        if found:
            problems.setdefault(host, []).extend(found)
    return problems


def training_links(target: Target, changeset: ChangeSet) -> tuple[dict[str, tuple[str, ...]],
                                                             tuple[str, ...]]:
    """(Spark -> twins, switch lanes) the push may have restarted: every lane of a port group
    whose link settings changed and the twins cabled to it, every twin a Spark changed, and
    every twin of a Spark that ran `netplan apply` (it flushes them all on NetworkManager)."""
    twins: dict[str, set[str]] = {}
    for h, p in changeset.sparks.items():
        if p.changes and not p.refused:
            planned = {w.netdev for w in p.wants}
            flushed = p.netplan and runs_netplan_apply(p)
            twins[h] = planned if flushed else planned & set(p.touched)
    lanes: set[str] = set()
    sw = target.intent.switch
    if sw is not None and changeset.switch is not None:
        bounced = {lp.port for lp in sw.lanes if lp.name in changeset.switch.bounced}
        for lp in sw.lanes:
            if lp.port in bounced and lp.cabled_to:
                lanes.add(lp.name)
                end = f"{sw.host}:{lp.name}"
                twins.setdefault(lp.cabled_to, set()).update(
                    i.netdev for i in target.intent.interfaces(lp.cabled_to)
                    if end in i.link_id.split("--"))
    return {h: tuple(sorted(t)) for h, t in twins.items() if t}, tuple(sorted(lanes))


def wait_for_links(target: Target, changeset: ChangeSet, hosts: list[str], workers: int,
                   progress: Callable[[str], None], nornir: Nornir | None,
                   timeout_s: float, configured: bool = False) -> list[str]:
    """Poll (bounded by `timeout_s`) until every link the push may have restarted has carrier
    on its twins and `link-ok` on its lane (`configured`: and each of those twins its planned
    MTU and addresses); what is still down when time is up (the verification that follows
    judges it)."""
    twins, lanes = training_links(target, changeset)
    switch = changeset.switch.host if changeset.switch is not None else None
    wants = ({h: {w.netdev: w for w in p.wants} for h, p in changeset.sparks.items()}
             if configured else None)
    return wait_for_training(target, twins, lanes, switch, hosts, workers, progress, nornir,
                             timeout_s, wants)


def wait_for_training(target: Target, twins: dict[str, tuple[str, ...]],
                      lanes: tuple[str, ...], switch: str | None, hosts: list[str],
                      workers: int, progress: Callable[[str], None], nornir: Nornir | None,
                      timeout_s: float,
                      wants: dict[str, dict[str, NetdevWant]] | None = None) -> list[str]:
    """Poll until `twins` (per Spark) have carrier (and, for those in `wants`, their planned
    MTU and addresses) and `lanes` are `link-ok`, at most `timeout_s`, saying what it waits
    for every few seconds; what is still down."""
    twins = {h: t for h, t in twins.items() if h in hosts}
    if switch not in hosts:
        switch = None
    started = time.monotonic()
    said = -LINK_WAIT_REPORT_S
    while True:
        down = _links_down(target, twins, lanes if switch else (), switch, workers, nornir,
                           wants or {})
        waited = time.monotonic() - started
        if not down or waited >= timeout_s:
            if down:
                progress(f"links still down after {waited:.0f} s: {', '.join(down)}")
            elif waited >= 1:
                progress(f"every link trained after {waited:.1f} s")
            return down
        if waited - said >= LINK_WAIT_REPORT_S:
            said = waited
            progress(f"waiting for links to train ({waited:.0f} of {timeout_s:.0f} s): "
                     f"{', '.join(down)}")
        time.sleep(LINK_POLL_S)


def _links_down(target: Target, twins: dict[str, tuple[str, ...]], lanes: tuple[str, ...],
                switch: str | None, workers: int, nornir: Nornir | None,
                wants: dict[str, dict[str, NetdevWant]]) -> list[str]:
    down: list[str] = []
    got, errors = run_task(target, sorted(twins), SPARK.links_down, workers,
                           lambda h: {"names": twins[h], "wants": wants.get(h)},
                           nornir=nornir)
    down += [f"{h}:{n}" for h, names in sorted(got.items()) for n in names]
    down += [f"{h} (unreadable: {why})" for h, why in sorted(errors.items())]
    if switch is not None and lanes:
        sw, sw_err = run_task(target, [switch], the_switch(target).links_down, 1,
                              lambda _h: {"names": lanes}, nornir=nornir)
        down += [f"{switch}:{lane}" for lane in sw.get(switch, [])]
        down += [f"{switch} (unreadable: {why})" for why in sw_err.values()]
    return down
