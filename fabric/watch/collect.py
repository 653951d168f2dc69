"""The poller: one persistent session per host (an exec-only SSH session per Spark, one
routeros-api session to the switch), read every cycle, each host in its own thread.

A host that does not answer within the cycle's timeout is marked down for that cycle (a
metric, not a crash) and is not asked again until its stuck read returns; the others are
read as usual. A failed session is closed and reopened on a later cycle, with exponential
backoff (1 s doubling to 60 s)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from nornir.core import Nornir
from nornir.core.inventory import Host

from fabric.intent.model import Intent
from fabric.remote.exec import SPARK_SSH
from fabric.remote.runner import address, describe_failure
from fabric.watch import labels, reads
from fabric.watch.readings import HostStatus, SparkReading, SwitchReading

log = logging.getLogger("fabric.watch")

Reading = SparkReading | SwitchReading


@dataclass
class Backoff:
    """When a failed session may be opened again: `base` s after the first failure, doubling
    to `cap`."""

    base: float = 1.0
    cap: float = 60.0
    failures: int = 0
    not_before: float = 0.0

    def failed(self, now: float) -> None:
        self.failures += 1
        self.not_before = now + min(self.cap, self.base * 2 ** (self.failures - 1))

    def succeeded(self) -> None:
        self.failures, self.not_before = 0, 0.0

    def ready(self, now: float) -> bool:
        return now >= self.not_before


@dataclass
class Session:
    """One host's session and read; `read` opens the connection when it is not open."""

    host: Host
    nornir: Nornir
    connection: str
    reader: Callable[[Any], Reading]
    backoff: Backoff = field(default_factory=Backoff)
    connects: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None
    stage: str = "connect"  # where the last read got to: "connect", then "read"

    def read(self) -> Reading:
        self.stage = "connect"
        if self.connection not in self.host.connections:
            self.connects += 1
        try:
            conn = self.host.get_connection(self.connection, self.nornir.config)
            self.stage = "read"
            return self.reader(conn)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.host.close_connection(self.connection)
        self.host.connections.pop(self.connection, None)


def _kind(exc: BaseException, stage: str) -> str:
    text = type(exc).__name__ + str(exc)
    if "Timeout" in text or "timed out" in text:
        return "timeout"
    return stage


def _switch_reader(api: Any, host: str, lanes: list[str]) -> Reading:
    return reads.read_switch(api, host, lanes)


def _spark_reader(conn: Any, host: str, twins: list[labels.TwinLabels],
                  timeout: float) -> Reading:
    return reads.read_spark(conn, host, twins, timeout)


class Poller:
    """Reads every host of `nr` once per `cycle()`; `timeout`: seconds a cycle waits."""

    def __init__(self, nr: Nornir, intent: Intent, timeout: float) -> None:
        self.timeout = timeout
        self.sessions: dict[str, Session] = {}
        for name, host in sorted(nr.inventory.hosts.items()):
            if host.get("role") == "switch":
                lanes = [lane.lane for lane in labels.lanes(intent)]
                self.sessions[name] = Session(host, nr, "routeros_api",
                                              partial(_switch_reader, host=name, lanes=lanes))
            elif twins := labels.twins(intent, name):
                self.sessions[name] = Session(
                    host, nr, SPARK_SSH,
                    partial(_spark_reader, host=name, twins=twins, timeout=timeout))
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.sessions)),
                                        thread_name_prefix="fabric-watch")
        self._inflight: dict[str, Future[tuple[Reading, float]]] = {}
        self.last_statuses: dict[str, HostStatus] = {}

    def _timed(self, session: Session) -> tuple[Reading, float]:
        t0 = time.monotonic()
        return session.read(), time.monotonic() - t0

    def cycle(self) -> tuple[dict[str, Reading], dict[str, HostStatus]]:
        """One read of every host: (host -> reading, host -> status)."""
        now = time.monotonic()
        waiting: dict[str, HostStatus] = {}
        for name, s in self.sessions.items():
            late = self._inflight.get(name)
            if late is not None and late.done():  # a stuck read came back: its result is stale
                self._inflight.pop(name)
            if name in self._inflight:
                s.failures["timeout"] = s.failures.get("timeout", 0) + 1
                waiting[name] = self._status(s, False, self.timeout, "still reading (stuck)",
                                             "timeout")
            elif not s.backoff.ready(now):
                waiting[name] = self._status(s, False, 0.0, s.last_error, "connect")
            else:
                self._inflight[name] = self._pool.submit(self._timed, s)
        wait(list(self._inflight.values()), timeout=self.timeout)
        readings: dict[str, Reading] = {}
        statuses: dict[str, HostStatus] = {}
        for name, fut in list(self._inflight.items()):
            if name in waiting:
                continue
            if not fut.done():
                statuses[name] = self._failed(self.sessions[name], "timeout",
                                              f"no answer within {self.timeout:g} s")
                continue
            self._inflight.pop(name)
            statuses[name] = self._settle(name, fut, readings)
        statuses.update(waiting)
        self.last_statuses = dict(sorted(statuses.items()))
        return readings, self.last_statuses

    def _settle(self, name: str, fut: Future[tuple[Reading, float]],
                readings: dict[str, Reading]) -> HostStatus:
        s = self.sessions[name]
        try:
            reading, seconds = fut.result()
        except Exception as exc:
            where = address(s.host)
            return self._failed(s, _kind(exc, s.stage),
                                describe_failure(exc, where))
        if s.last_error is not None:
            log.warning("%s: answering again", name)
        s.backoff.succeeded()
        s.last_error = None
        readings[name] = reading
        return self._status(s, True, seconds, None, "")

    def _failed(self, s: Session, kind: str, why: str) -> HostStatus:
        s.failures[kind] = s.failures.get(kind, 0) + 1
        if why != s.last_error:
            log.warning("%s: %s", s.host.name, why)
        s.last_error = why
        s.backoff.failed(time.monotonic())
        return self._status(s, False, self.timeout if kind == "timeout" else 0.0, why, kind)

    @staticmethod
    def _status(s: Session, up: bool, seconds: float, why: str | None, kind: str) -> HostStatus:
        return HostStatus(s.host.name, up, seconds, why, kind, dict(s.failures), s.connects)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for s in self.sessions.values():
            s.close()
