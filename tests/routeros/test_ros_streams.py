"""Commands that stream until cancelled, as RouterOS runs them for an API client: `listen`,
`print =follow=` / `=follow-only=`, `print =interval=`, `monitor` without `once`; `/cancel`
ends one (or all) with an `interrupted` trap (category 2), a `!done` for the cancel and one for
the stream. A client that goes away leaves no stream thread behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from routeros_api.exceptions import RouterOsApiCommunicationError

from fabric.lab.routeros.state import FACTORY

from .conftest import MakeLab, connect
from .helpers import Lab, RawClient, eventually

Sentence = list[str]


class Reader:
    """A raw client whose sentences are read as they come, several commands at once."""

    def __init__(self, lab: Lab) -> None:
        self.raw = RawClient(lab.port)
        self.raw.login()
        self.seen: list[Sentence] = []

    def send(self, *words: str) -> None:
        self.raw.send(*words)

    def until(self, done: Callable[[list[Sentence]], bool], timeout: float = 5.0
              ) -> list[Sentence]:
        """Read sentences until `done(all read so far)`; what was read since the call."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while not done(self.seen[start:]):
            self.raw.sock.settimeout(max(0.01, deadline - time.monotonic()))
            self.seen.append(self.raw.read())
        return self.seen[start:]

    def tagged(self, tag: str, kind: str = "!re", since: int = 0) -> list[Sentence]:
        return [s for s in self.seen[since:] if s[0] == kind and f".tag={tag}" in s]

    def close(self) -> None:
        self.raw.close()


def attr(sentence: Sentence, key: str) -> str | None:
    prefix = f"={key}="
    return next((w[len(prefix):] for w in sentence if w.startswith(prefix)), None)


def has(kind: str, tag: str, **attrs: str) -> Callable[[list[Sentence]], bool]:
    def test(read: list[Sentence]) -> bool:
        return any(s[0] == kind and f".tag={tag}" in s
                   and all(attr(s, k.replace("_", "-")) == v for k, v in attrs.items())
                   for s in read)
    return test


def cancelled(reader: Reader, stream: str, cancel: str) -> list[Sentence]:
    """Cancel `stream`; the three closing sentences, in the order they came."""
    reader.send("/cancel", f"=tag={stream}", f".tag={cancel}")
    read = reader.until(has("!done", stream))
    closing = [s for s in read if s[0] != "!re"]
    assert [s for s in read if s[0] == "!re"] == read[:len(read) - len(closing)]
    return closing


def interrupted(stream: str, cancel: str) -> list[Sentence]:
    return [["!trap", "=category=2", "=message=interrupted", f".tag={stream}"],
            ["!done", f".tag={cancel}"], ["!done", f".tag={stream}"]]


def stream_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ros-stream")]


@pytest.fixture
def reader(lab: Lab) -> Any:
    r = Reader(lab)
    yield r
    r.close()


# --- listen -----------------------------------------------------------------------------------


def test_listen_streams_interface_changes_until_cancelled(lab: Lab, reader: Reader) -> None:
    reader.send("/interface/listen", ".tag=l")
    time.sleep(0.3)
    assert reader.tagged("l") == []  # nothing changed yet: nothing sent
    reader.send("/interface/set", "=numbers=qsfp56-dd-1-1", "=mtu=9000", ".tag=s")
    # the set is served while the stream runs; its `!done` and the stream's `!re` may come
    # in either order (the change is streamed as it is made, before the set answers)
    changed = has("!re", "l", name="qsfp56-dd-1-1", mtu="9000")
    got = reader.until(lambda read: changed(read) and has("!done", "s")(read))
    assert [attr(s, "name") for s in got if ".tag=l" in s] == ["qsfp56-dd-1-1"]
    lab.backend.poke("qsfp56-dd-2-1", carrier=False)  # the kernel changes, not the API
    reader.until(has("!re", "l", name="qsfp56-dd-2-1", running="false"))
    assert cancelled(reader, "l", "c") == interrupted("l", "c")
    reader.send("/system/identity/print", ".tag=after")  # the session goes on
    reader.until(has("!done", "after"))
    assert reader.tagged("l", since=len(reader.seen) - 2) == []


def test_listen_reports_a_removed_item_as_dead(make_lab: MakeLab) -> None:
    lab = make_lab(config=FACTORY)
    reader = Reader(lab)
    reader.send("/interface/bridge/listen", ".tag=l")
    reader.send("/interface/bridge/add", "=name=br2", ".tag=a")
    added = reader.until(has("!done", "a"))
    new_id = attr(next(s for s in added if s[0] == "!done"), "ret")
    reader.until(has("!re", "l", name="br2"))
    reader.send("/interface/bridge/remove", f"=.id={new_id}")
    reader.until(has("!re", "l", **{".id": str(new_id), ".dead": "true"}))
    assert cancelled(reader, "l", "c") == interrupted("l", "c")
    reader.close()


# --- print follow, follow-only, interval ----------------------------------------------------


def test_print_follow_prints_then_streams_changes(make_lab: MakeLab) -> None:
    lab = make_lab(config=FACTORY)
    reader = Reader(lab)
    reader.send("/interface/bridge/print", "=follow=", "=.proplist=name,mtu", ".tag=f")
    first = reader.until(has("!re", "f", name="bridge"))
    assert [s for s in first if s[0] != "!re"] == []  # no !done: it goes on
    reader.send("/interface/bridge/print", "=follow-only=", "=.proplist=name,mtu", ".tag=o")
    reader.send("/interface/bridge/set", "=numbers=bridge", "=mtu=9000")
    reader.until(lambda read: has("!re", "f", mtu="9000")(read) and has("!re", "o",
                                                                         mtu="9000")(read))
    assert [attr(s, "name") for s in reader.tagged("o")] == ["bridge"]  # no listing first
    assert attr(reader.tagged("f")[-1], "mtu") == "9000"
    reader.send("/cancel", ".tag=all")  # no =tag=: every stream of this session ends
    read = reader.until(lambda r: has("!done", "f")(r) and has("!done", "o")(r))
    closing = [s for s in read if s[0] != "!re"]
    assert sorted(map(tuple, closing)) == sorted(map(tuple, [
        ["!trap", "=category=2", "=message=interrupted", ".tag=f"],
        ["!trap", "=category=2", "=message=interrupted", ".tag=o"],
        ["!done", ".tag=all"], ["!done", ".tag=f"], ["!done", ".tag=o"]]))
    assert closing.index(["!done", ".tag=all"]) > max(
        i for i, s in enumerate(closing) if s[0] == "!trap")
    reader.close()


def test_print_interval_repeats_the_print(reader: Reader) -> None:
    reader.send("/system/identity/print", "=interval=200ms", ".tag=i")
    read = reader.until(lambda r: len([s for s in r if ".tag=i" in s]) >= 3, timeout=3)
    rows = [s for s in read if ".tag=i" in s]
    assert [attr(s, "name") for s in rows] == ["crs804"] * len(rows)
    assert [attr(s, ".section") for s in rows][:3] == ["0", "1", "2"]
    assert cancelled(reader, "i", "c") == interrupted("i", "c")


# --- monitor ----------------------------------------------------------------------------------


def test_monitor_without_once_streams_a_row_per_second(reader: Reader) -> None:
    start = time.monotonic()
    reader.send("/interface/ethernet/monitor", "=numbers=qsfp56-dd-1-1,qsfp56-dd-2-1",
                ".tag=m")
    read = reader.until(lambda r: len([s for s in r if ".tag=m" in s]) >= 4, timeout=4)
    elapsed = time.monotonic() - start
    rows = [s for s in read if ".tag=m" in s]
    assert [attr(s, "name") for s in rows[:4]] == ["qsfp56-dd-1-1", "qsfp56-dd-2-1"] * 2
    assert [attr(s, ".section") for s in rows[:4]] == ["0", "0", "1", "1"]
    assert 0.9 < elapsed < 3, elapsed  # the second round a second after the first
    assert all(attr(s, "status") == "link-ok" for s in rows)
    assert cancelled(reader, "m", "c") == interrupted("m", "c")


def test_monitor_with_a_duration_ends_by_itself(reader: Reader) -> None:
    reader.send("/interface/ethernet/monitor", "=numbers=qsfp56-dd-1-1", "=interval=100ms",
                "=duration=350ms", ".tag=d")
    read = reader.until(has("!done", "d"), timeout=3)
    assert 3 <= len([s for s in read if s[0] == "!re"]) <= 5
    assert not any(s[0] == "!trap" for s in read)


def test_monitor_once_is_still_one_row_each(reader: Reader) -> None:
    reader.send("/interface/ethernet/monitor", "=numbers=qsfp56-dd-1-1", "=once=", ".tag=o")
    read = reader.until(has("!done", "o"))
    assert [s[0] for s in read] == ["!re", "!done"] and attr(read[0], ".section") is None


# --- cancel, disconnect, a real client ------------------------------------------------------


def test_cancel_of_nothing_running_is_just_done(reader: Reader) -> None:
    reader.send("/cancel", "=tag=nope", ".tag=c")
    assert reader.until(has("!done", "c")) == [["!done", ".tag=c"]]


def test_streams_stop_when_the_client_goes_away(lab: Lab) -> None:
    before = set(stream_threads())
    reader = Reader(lab)
    reader.send("/interface/listen", ".tag=l")
    reader.send("/interface/ethernet/monitor", "=numbers=qsfp56-dd-1-1", "=interval=100ms",
                ".tag=m")
    reader.until(has("!re", "m"))
    assert len(set(stream_threads()) - before) == 2
    reader.close()
    eventually(lambda: not (set(stream_threads()) - before), timeout=5)


def test_listen_and_cancel_with_routeros_api(lab: Lab) -> None:
    pool, other = connect(lab), connect(lab)
    try:
        api = pool.get_api()
        listening = api.get_binary_resource("/interface").call_async("listen")
        time.sleep(0.3)
        other.get_api().get_resource("/interface/ethernet").set(id="qsfp56-dd-1-5",
                                                                   mtu="9000")
        rows = iter(listening)
        row = next(rows)
        assert (row["name"], row["mtu"]) == (b"qsfp56-dd-1-5", b"9000")
        tag = listening.inner.tag  # the tag routeros-api gave the listen
        api.get_binary_resource("/").call("cancel", {"tag": tag})
        with pytest.raises(RouterOsApiCommunicationError, match="interrupted"):
            list(rows)
        assert api.get_resource("/system/identity").get()[0]["name"] == "crs804"
    finally:
        pool.disconnect()
        other.disconnect()
