"""Collect the facts of a whole target: every Spark over SSH and the switch over its API,
in parallel (Nornir's threaded runner), with an optional live per-host progress display.

A host that cannot be read lands in `Facts.errors[host]` with a one-line reason (secrets
scrubbed); the other hosts complete. `families` narrows what is read to what those check
families judge (plus the fingerprint's inputs; see `spark_commands`). `Beside` is work a
validation does on each host's connection at the same time: a Spark's scripts run in one
burst with its facts batch (`fabric.probes.burst`), the switch's calls right after its facts.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from netmiko.exceptions import (
    NetmikoAuthenticationException,
    NetmikoTimeoutException,
    ReadTimeout,
)
from nornir.core import Nornir
from nornir.core.task import AggregatedResult, Result, Task
from paramiko.ssh_exception import AuthenticationException, BadHostKeyException

from fabric.collect.spark_commands import render_script
from fabric.collect.spark_facts import (
    build_from_transcript,
    collect_spark_facts,
    spark_batch,
)
from fabric.collect.spark_sections import TranscriptError
from fabric.collect.switch_facts import collect_switch_facts
from fabric.errors import InputError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.probes.burst import Script, ScriptOutput, exec_burst
from fabric.remote.nornir_setup import make_nornir
from fabric.remote.routeros_api import RouterOsConnectError
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
                 families: Collection[str] | None) -> tuple[SparkFacts, Side]:
    """The facts batch with `scripts`, side by side in one burst."""
    host = task.host.name
    twins, used, commands = spark_batch(intent, host, families=families)
    conn = task.host.get_connection("netmiko", task.nornir.config)
    started = now()
    batch = Script(FACTS, render_script(commands), FACTS_TIMEOUT_S, login=True)
    outs = exec_burst(conn, [batch, *scripts])
    facts = build_from_transcript(intent, host, twins, used, commands, outs[0].output)
    return facts, Side(started, tuple(outs[1:]))


def collect_host_facts(task: Task, intent: Intent, rows: HostProgress,
                       close: bool = True, narrow: bool = False,
                       families: Collection[str] | None = None,
                       beside: Beside | None = None,
                       first: Mapping[str, Side] | None = None) -> Result:
    """Collect one host's facts with the task of its role, then close its connection (unless
    `close` is False: the caller reuses it). `narrow`: only what `fabric gate` compares;
    `families`: only what those families judge. With `beside`, the result is a `Gathered`
    (`first`: each host's first stage, already run)."""
    host = task.host.name
    role = task.host.get("role")
    connection = "routeros_api" if role == "switch" else "netmiko"
    try:
        rows.update(host, "connecting")
        api = task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "collecting")
        result: Any
        if beside is None:
            task_fn = collect_switch_facts if role == "switch" else collect_spark_facts
            result = task_fn(task, intent, narrow=narrow, families=families).result
        elif role == "switch":
            started = now()
            facts = collect_switch_facts(task, intent, narrow=narrow, families=families).result
            after = beside.switch(api) if beside.switch is not None else None
            result = Gathered(facts, Side(started, switch=after), (first or {}).get(host))
        else:
            scripts = beside.spark(host) if beside.spark is not None else ()
            facts, side = _spark_burst(task, intent, scripts, families)
            result = Gathered(facts, side, (first or {}).get(host))
        rows.update(host, "[green]done", done=True)
        return Result(host=task.host, result=result, changed=False)
    except Exception:
        rows.update(host, "[red]failed", done=True)
        raise
    finally:
        if close:
            task.host.close_connections()


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        cur = todo.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        todo += [c for c in (cur.__cause__, cur.__context__) if c is not None]
        todo += [e for e in getattr(cur, "errors", {}).values() if isinstance(e, BaseException)]


def describe_failure(exc: BaseException, where: str = "ssh") -> str:
    """One short line saying why a host could not be read (`where`: "ssh ADDRESS:PORT")."""
    text = str(exc)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)
    if isinstance(exc, RouterOsConnectError):
        return first
    causes = list(_causes(exc))

    def seen(*kinds: type[BaseException]) -> bool:
        return any(isinstance(c, kinds) for c in causes)

    for cause in causes:
        if isinstance(cause, ConnectionRefusedError) or (
                isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED):
            return f"{where}: connection refused (is sshd running?)"
        if isinstance(cause, socket.timeout | TimeoutError) and not seen(ReadTimeout):
            return f"{where}: no answer within the connect timeout"
    if seen(BadHostKeyException) or "does not match" in text:
        return f"{where}: host key mismatch (the server's key is not the one in known_hosts)"
    if "not found in known_hosts" in text:
        return f"{where}: unknown host key (the server is not in known_hosts)"
    if seen(NetmikoAuthenticationException, AuthenticationException):
        return f"{where}: authentication failed (key or user rejected)"
    if seen(NetmikoTimeoutException):
        return f"{where}: TCP connection failed (no route, refused or timed out)"
    if seen(ReadTimeout):
        return f"{where}: the command batch did not finish in time"
    if isinstance(exc, TranscriptError):
        return f"{where}: broken transcript: {exc}"
    return f"{type(exc).__name__}: {first}"[:300]


def _reason(multi: Any, where: str) -> str:
    for result in multi:
        if result.exception is not None:
            return describe_failure(result.exception, where)
    return "failed without an exception"


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
    known = [h for h in intent.graph.nodes if intent.hosts[h].role in ROLES]
    if hosts is not None:
        unknown = sorted(set(hosts) - set(known))
        if unknown:
            raise InputError(f"--hosts: not in topology {intent.name}: {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
    wanted = sorted(hosts if hosts is not None else known)
    # Nornir logs each failed host's traceback; the reason goes into Facts.errors instead.
    logging.getLogger("nornir").addHandler(logging.NullHandler())
    if nornir is None:
        nr = exec_only(make_nornir(target, wanted))
    else:
        nr = nornir.filter(filter_func=lambda h: h.name in set(wanted))
    rows = HostProgress(progress, sorted(nr.inventory.hosts))
    started = datetime.now(UTC)
    errors: dict[str, str] = {}
    first: dict[str, Side] = {}
    if beside is not None and beside.has_first:
        opened = nr.run(task=open_host, rows=rows, beside=beside, name="open",
                        raise_on_error=False, on_failed=True)
        for host, multi in opened.items():
            if multi.failed:
                errors[host] = _failure(target, nr, host, multi)
            else:
                first[host] = multi[0].result
        nr = nr.filter(filter_func=lambda h: h.name not in errors)
        if on_opened is not None:
            on_opened("connect, counters before")
    agg: AggregatedResult = nr.run(task=collect_host_facts, intent=intent, rows=rows,
                                   close=nornir is None, narrow=narrow, families=families,
                                   beside=beside, first=first, name="collect_facts",
                                   raise_on_error=False, on_failed=nornir is not None)
    sparks: dict[str, SparkFacts] = {}
    switch: SwitchFacts | None = None
    gathered: dict[str, Gathered] = {}
    for host in wanted:
        if host in errors:
            continue
        found = agg.get(host)
        if found is None:
            errors[host] = "not in the inventory"
            continue
        if found.failed:
            errors[host] = _failure(target, nr, host, found)
            continue
        result = found[0].result
        if isinstance(result, Gathered):
            gathered[host] = result
            result = result.facts
        if isinstance(result, SparkFacts):
            sparks[host] = result
        elif isinstance(result, SwitchFacts):
            switch = result
    facts = Facts(collected=started.isoformat(timespec="seconds"), topology=intent.name,
                  sparks=sparks, switch=switch, errors=dict(sorted(errors.items())))
    return facts, gathered


def _failure(target: Target, nr: Nornir, host: str, multi: Any) -> str:
    """Why `host` could not be read: one line, secrets scrubbed."""
    h = nr.inventory.hosts[host]
    where = (f"routeros-api {h.hostname}" if h.get("role") == "switch"
             else f"ssh {h.hostname}:{h.port or 22}")
    return target.credentials.scrub(_reason(multi, where))
