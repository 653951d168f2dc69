"""Collect the facts of a whole target: every Spark over SSH and the switch over its API,
in parallel (Nornir's threaded runner), with an optional live per-host progress display.

A host that cannot be read lands in `Facts.errors[host]` with a one-line reason (secrets
scrubbed); the other hosts complete.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from netmiko.exceptions import (
    NetmikoAuthenticationException,
    NetmikoTimeoutException,
    ReadTimeout,
)
from nornir.core import Nornir
from nornir.core.task import AggregatedResult, Result, Task
from paramiko.ssh_exception import AuthenticationException, BadHostKeyException
from rich.progress import Progress, TaskID

from fabric.connections.routeros_api import RouterOsConnectError
from fabric.errors import InputError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.nornir_setup import make_nornir
from fabric.target import Target
from fabric.tasks.collect_spark_facts import collect_spark_facts
from fabric.tasks.collect_spark_sections import TranscriptError
from fabric.tasks.collect_switch_facts import collect_switch_facts

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


def collect_host_facts(task: Task, intent: Intent, rows: HostProgress,
                       close: bool = True, narrow: bool = False) -> Result:
    """Collect one host's facts with the task of its role, then close its connection (unless
    `close` is False: the caller reuses it). `narrow`: only what `fabric gate` compares."""
    host = task.host.name
    role = task.host.get("role")
    connection = "routeros_api" if role == "switch" else "netmiko"
    try:
        rows.update(host, "connecting")
        task.host.get_connection(connection, task.nornir.config)
        rows.update(host, "collecting")
        if role == "switch":
            result = collect_switch_facts(task, intent, narrow=narrow)
        else:
            result = collect_spark_facts(task, intent, narrow=narrow)
        rows.update(host, "[green]done", done=True)
        return result
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
                  narrow: bool = False) -> Facts:
    """Facts of every Spark and the switch of the target (or of `hosts`), collected at once.

    With `nornir`, run on it and leave its connections open for the caller's next tasks.
    `narrow`: only the fingerprint's inputs (`fabric gate`), one small batch per host.
    """
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
        nr = make_nornir(target, wanted)
    else:
        nr = nornir.filter(filter_func=lambda h: h.name in set(wanted))
    rows = HostProgress(progress, sorted(nr.inventory.hosts))
    started = datetime.now(UTC)
    agg: AggregatedResult = nr.run(task=collect_host_facts, intent=intent, rows=rows,
                                   close=nornir is None, narrow=narrow, name="collect_facts",
                                   raise_on_error=False, on_failed=nornir is not None)
    sparks: dict[str, SparkFacts] = {}
    switch: SwitchFacts | None = None
    errors: dict[str, str] = {}
    for host in wanted:
        multi = agg.get(host)
        if multi is None:
            errors[host] = "not in the inventory"
        elif multi.failed:
            h = nr.inventory.hosts[host]
            api = h.get("role") == "switch"
            where = (f"routeros-api {h.hostname}" if api
                     else f"ssh {h.hostname}:{h.port or 22}")
            errors[host] = target.credentials.scrub(_reason(multi, where))
        elif isinstance(multi[0].result, SparkFacts):
            sparks[host] = multi[0].result
        elif isinstance(multi[0].result, SwitchFacts):
            switch = multi[0].result
    return Facts(collected=started.isoformat(timespec="seconds"), topology=intent.name,
                 sparks=sparks, switch=switch, errors=errors)
