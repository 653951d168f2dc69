"""Collect the facts of a whole target: every Spark over SSH and the switch over its API,
in parallel (Nornir's threaded runner), with an optional live per-host progress display.

A host that cannot be read lands in `Facts.errors[host]` with a one-line reason (secrets
scrubbed); the other hosts complete. `families` narrows what is read to what those check
families judge (plus the fingerprint's inputs; see `spark_commands`). `Beside` is work a
validation does on each host's connection at the same time: a Spark's scripts run in one
burst with its facts batch (`fabric.remote.burst`), the switch's calls right after its facts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from fabric.devices.crs804.facts import collect_switch_facts
from fabric.devices.spark.commands import render_script
from fabric.devices.spark.facts import (
    build_from_transcript,
    collect_spark_facts,
    spark_batch,
)
from fabric.errors import InputError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.neighbors import judge_lldpd, new_beacon
from fabric.remote.burst import Script, ScriptOutput, exec_burst
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import run
from fabric.remote.transport import exec_only
from fabric.target import Target

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

ROLES = ("spark", "switch")


class HostProgress:
    """Per-host rows on a rich Progress (thread-safe: Progress serialises updates)."""

    def __init__(self, progress: Progress | None, hosts: list[str]) -> None:
        self.progress = progress
        self.rows: dict[str, TaskID] = {}
        self.lock = threading.Lock()
        if progress is not None:
            for host in hosts:
                self.rows[host] = progress.add_task(host, total=1, status="waiting")

    def update(self, host: str, status: str, done: bool = False) -> None:
        if self.progress is not None and host in self.rows:
            self.progress.update(self.rows[host], status=status, completed=1 if done else 0)


#: How long a Spark's facts batch may take (the LLDP wait included).
FACTS_TIMEOUT_S = 60.0
#: The facts batch's name in a burst.
FACTS = "facts"


@dataclass(frozen=True)
class Beside:
    """Work done on each host's open connection around its facts. The first stage
    (`first_spark(host)`: scripts a Spark runs in one burst; `first_switch(api)`: calls on the
    switch's API) runs on every host and is done everywhere before any host's facts are read.
    Then `spark(host)` gives the scripts a Spark runs in one burst with its facts batch, and
    `switch(api)` runs on the switch's API right after its facts."""

    spark: Callable[[str], Sequence[Script]] | None = None
    switch: Callable[[Any], Any] | None = None
    first_spark: Callable[[str], Sequence[Script]] | None = None
    first_switch: Callable[[Any], Any] | None = None

    @property
    def has_first(self) -> bool:
        return self.first_spark is not None or self.first_switch is not None


@dataclass(frozen=True)
class Side:
    """What one stage of `Beside` work gave on a host: a Spark's script outputs (in order)
    and when its burst started, or what the switch's call returned."""

    started: str
    scripts: tuple[ScriptOutput, ...] = ()
    switch: Any = None

    def output(self, name: str) -> ScriptOutput | None:
        """The output of the script called `name`, if it ran."""
        return next((o for o in self.scripts if o.name == name), None)


@dataclass(frozen=True)
class Gathered:
    """One host's facts and what its `Beside` work gave (`first`: the first stage)."""

    facts: SparkFacts | SwitchFacts
    beside: Side
    first: Side | None = None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _side(task: Task, api: Any, spark: Callable[[str], Sequence[Script]] | None,
          switch: Callable[[Any], Any] | None) -> Side:
    started = now()
    if task.host.get("role") == "switch":
        return Side(started, switch=switch(api) if switch is not None else None)
    scripts = spark(task.host.name) if spark is not None else ()
    return Side(started, tuple(exec_burst(api, scripts)) if scripts else ())


def open_host(task: Task, rows: HostProgress, beside: Beside) -> Result:
    """Connect to the host and run the first stage of `beside` on it. Result: a `Side`."""
    host = task.host.name
    connection = "routeros_api" if task.host.get("role") == "switch" else "netmiko"
    try:
        rows.update(host, "connecting")
        api = task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "connected")
        side = _side(task, api, beside.first_spark, beside.first_switch)
        return Result(host=task.host, result=side, changed=False)
    except Exception:
        rows.update(host, "[red]failed", done=True)
        raise


def _spark_burst(task: Task, intent: Intent, scripts: Sequence[Script],
                 families: Collection[str] | None, beacon: str | None
                 ) -> tuple[SparkFacts, Side]:
    """The facts batch with `scripts`, side by side in one burst."""
    host = task.host.name
    twins, used, commands = spark_batch(intent, host, families=families, beacon=beacon)
    conn = task.host.get_connection("netmiko", task.nornir.config)
    started = now()
    # The facts batch starts last: its `renice $$` then lowers the burst's own shell only,
    # once every other script has started at normal priority.
    batch = Script(FACTS, render_script(commands), FACTS_TIMEOUT_S, login=True)
    *outs, facts_out = exec_burst(conn, [*scripts, batch])
    facts = build_from_transcript(intent, host, twins, used, commands, facts_out.output)
    return facts, Side(started, tuple(outs))


def collect_host_facts(task: Task, intent: Intent, rows: HostProgress,
                       close: bool = True, narrow: bool = False,
                       families: Collection[str] | None = None,
                       beside: Beside | None = None,
                       first: Mapping[str, Side] | None = None,
                       beacon: str | None = None, began: float | None = None) -> Result:
    """Collect one host's facts with the task of its role, then close its connection (unless
    `close` is False: the caller reuses it). `narrow`: only what `fabric gate` compares;
    `families`: only what those families judge; `beacon`: the LLDP beacon a Spark announces
    (`fabric.neighbors`); `began`: when the whole collection began (monotonic). With `beside`,
    the result is a `Gathered` (`first`: each host's first stage, already run)."""
    host = task.host.name
    role = task.host.get("role")
    connection = "routeros_api" if role == "switch" else "netmiko"
    try:
        rows.update(host, "connecting")
        api = task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "collecting")
        result: Any

        def waiting(what: str) -> None:
            rows.update(host, what)

        if role == "switch" and beside is None:
            result = collect_switch_facts(task, intent, narrow=narrow, families=families,
                                          on_wait=waiting, began=began).result
        elif beside is None:
            result = collect_spark_facts(task, intent, narrow=narrow, families=families,
                                         beacon=beacon).result
        elif role == "switch":
            started = now()
            facts = collect_switch_facts(task, intent, narrow=narrow, families=families,
                                         on_wait=waiting, began=began).result
            after = beside.switch(api) if beside.switch is not None else None
            result = Gathered(facts, Side(started, switch=after), (first or {}).get(host))
        else:
            scripts = beside.spark(host) if beside.spark is not None else ()
            facts, side = _spark_burst(task, intent, scripts, families, beacon)
            result = Gathered(facts, side, (first or {}).get(host))
        rows.update(host, "[green]done", done=True)
        return Result(host=task.host, result=result, changed=False)
    except Exception:
        rows.update(host, "[red]failed", done=True)
        raise
    finally:
        if close:
            task.host.close_connections()


def collect_facts(target: Target, hosts: list[str] | None = None,
                  progress: Progress | None = None, nornir: Nornir | None = None,
                  narrow: bool = False, families: Collection[str] | None = None) -> Facts:
    """Facts of every Spark and the switch of the target (or of `hosts`), collected at once.

    With `nornir`, run on it and leave its connections open for the caller's next tasks.
    `narrow`: only the fingerprint's inputs (`fabric gate`), one small batch per host.
    `families`: only what those check families judge (None: everything).
    """
    facts, _ = gather_facts(target, hosts, progress, nornir, narrow, families)
    return facts


def gather_facts(target: Target, hosts: list[str] | None = None,
                 progress: Progress | None = None, nornir: Nornir | None = None,
                 narrow: bool = False, families: Collection[str] | None = None,
                 beside: Beside | None = None,
                 on_opened: Callable[[str], None] | None = None
                 ) -> tuple[Facts, dict[str, Gathered]]:
    """`collect_facts`, plus each answering host's `Gathered` when `beside` is given
    (`on_opened("connect, …")` when its first stage is done everywhere)."""
    intent = target.intent
    known = [h for h in intent.cabled if intent.hosts[h].role in ROLES]
    if hosts is not None:
        unknown = sorted(set(hosts) - set(known))
        if unknown:
            raise InputError(f"--hosts: not in topology {intent.name}: {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
    wanted = sorted(hosts if hosts is not None else known)
    if nornir is None:
        nr = exec_only(make_nornir(target, wanted))
    else:
        nr = nornir.filter(filter_func=lambda h: h.name in set(wanted))
    rows = HostProgress(progress, sorted(nr.inventory.hosts))
    started = datetime.now(UTC)
    errors: dict[str, str] = {}
    first: dict[str, Side] = {}
    scrub = target.credentials.scrub
    if beside is not None and beside.has_first:
        opened, errors = run(nr, open_host, rows=rows, beside=beside, name="open",
                             on_failed=True, addressed=True, scrub=scrub)
        first = dict(opened)
        nr = nr.filter(filter_func=lambda h: h.name not in errors)
        if on_opened is not None:
            on_opened("connect, counters before")
    beacon = new_beacon()
    began = time.monotonic()  # a switch entry heard since is from the cable plugged in now
    got, failed = run(nr, collect_host_facts, hosts=[h for h in wanted if h not in errors],
                      intent=intent, rows=rows, close=nornir is None, narrow=narrow,
                      families=families, beside=beside, first=first, beacon=beacon,
                      began=began,
                      name="collect_facts",
                      on_failed=nornir is not None, addressed=True, scrub=scrub)
    errors |= failed
    sparks: dict[str, SparkFacts] = {}
    switch: SwitchFacts | None = None
    gathered: dict[str, Gathered] = {}
    for host, result in got.items():
        if isinstance(result, Gathered):
            gathered[host] = result
            result = result.facts
        if isinstance(result, SparkFacts):
            sparks[host] = result
        elif isinstance(result, SwitchFacts):
            switch = result
    facts = Facts(collected=started.isoformat(timespec="seconds"), topology=intent.name,
                  sparks=sparks, switch=switch, errors=dict(sorted(errors.items())))
    return judge_lldpd(intent, facts, beacon), gathered
