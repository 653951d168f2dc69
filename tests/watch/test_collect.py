"""The poller on fake hosts: a stuck host is a timeout, not a stall of the others; a failed
session is closed and opened again only after its backoff; the textfile is written whole."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fabric.intent.build import load_intent
from fabric.remote.exec import SPARK_SSH
from fabric.watch.collect import Backoff, Poller
from fabric.watch.serve import TEXTFILE, serve
from tests.conftest import INVENTORY


class FakeHost:
    def __init__(self, name: str, role: str) -> None:
        self.name, self.hostname, self.port = name, f"198.18.0.{len(name)}", 22
        self.role = role
        self.connections: dict[str, Any] = {}
        self.opened = 0

    def get(self, key: str, default: Any = None) -> Any:
        return self.role if key == "role" else default

    def get_connection(self, name: str, config: Any) -> Any:
        if name not in self.connections:
            self.opened += 1
            self.connections[name] = object()
        return self.connections[name]

    def close_connection(self, name: str) -> None:
        self.connections.pop(name, None)


class FakeNornir:
    config = None

    def __init__(self, hosts: list[FakeHost]) -> None:
        self.inventory = type("Inv", (), {"hosts": {h.name: h for h in hosts}})()


@pytest.fixture
def poller() -> Any:
    intent = load_intent("star4", INVENTORY)
    hosts = [FakeHost(f"spark0{i}", "spark") for i in range(1, 5)] + [FakeHost("crs804",
                                                                                 "switch")]
    p = Poller(FakeNornir(hosts), intent, timeout=0.3)  # type: ignore[arg-type]
    yield p
    p.close()


def _reader(value: str) -> Any:
    return lambda conn: value


def test_a_stuck_host_times_out_and_the_others_are_read(poller: Poller) -> None:
    release = threading.Event()
    for name, s in poller.sessions.items():
        s.reader = _reader(name)
    poller.sessions["spark03"].reader = lambda conn: release.wait(5) and "late"
    t0 = time.monotonic()
    readings, statuses = poller.cycle()
    assert time.monotonic() - t0 < 1.0
    assert set(readings) == {"spark01", "spark02", "spark04", "crs804"}
    assert not statuses["spark03"].up and statuses["spark03"].kind == "timeout"
    # still stuck: not asked again, still down
    readings, statuses = poller.cycle()
    assert "spark03" not in readings and statuses["spark03"].kind == "timeout"
    release.set()
    time.sleep(0.1)
    poller.cycle()  # the late answer is dropped; asked again once its backoff is over
    poller.sessions["spark03"].backoff.not_before = 0.0
    readings, statuses = poller.cycle()
    assert readings["spark03"] == "late" and statuses["spark03"].up
    assert statuses["spark03"].failures["timeout"] == 2


def test_a_failed_session_is_closed_and_reopened_after_its_backoff(poller: Poller) -> None:
    s = poller.sessions["spark01"]
    calls = []

    def broken(conn: Any) -> str:
        calls.append(conn)
        raise EOFError("session closed")

    s.reader = broken
    _, statuses = poller.cycle()
    assert not statuses["spark01"].up and statuses["spark01"].kind == "read"
    assert SPARK_SSH not in s.host.connections and s.backoff.failures == 1
    _, statuses = poller.cycle()  # within the backoff: not tried
    assert len(calls) == 1 and not statuses["spark01"].up
    s.reader = _reader("ok")
    s.backoff.not_before = 0.0
    readings, statuses = poller.cycle()
    assert readings["spark01"] == "ok" and statuses["spark01"].connects == 2
    assert s.backoff.failures == 0


def test_backoff_doubles_up_to_its_cap() -> None:
    b = Backoff(base=1.0, cap=8.0)
    waits = []
    for _ in range(6):
        b.failed(100.0)
        waits.append(b.not_before - 100.0)
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert not b.ready(100.5) and b.ready(108.0)


def test_once_writes_the_textfile_and_closes_the_sessions(poller: Poller, tmp_path: Path) -> None:
    for s in poller.sessions.values():
        s.reader = lambda conn: (_ for _ in ()).throw(OSError("unreachable"))
    serve(poller, load_intent("star4", INVENTORY), 1.0, None, tmp_path, once=True)
    text = (tmp_path / TEXTFILE).read_text()
    assert 'fabric_watch_up{host="spark01"} 0.0' in text
    assert 'fabric_watch_scrape_failures_total{host="crs804",kind="read"} 1.0' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == [TEXTFILE]
