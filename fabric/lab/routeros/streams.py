"""Commands that stream until cancelled, one thread each, for one API session.

RouterOS runs them as the API manual and librouteros's protocol analysis show: ``listen`` sends
an ``!re`` for every item that changes (``=.dead=true`` for one removed), ``print =follow=``
prints and then goes on like ``listen`` (``=follow-only=``: only the changes), ``print
=interval=`` repeats the print, ``monitor`` without ``once`` sends its rows again every
``interval`` (1 s) until its ``duration`` is over; repeated output carries ``=.section=N``.
``/cancel =tag=T`` ends stream T (without ``=tag=``: every stream of the session): RouterOS
answers ``!trap =category=2 =message=interrupted`` for the stream, ``!done`` for the cancel,
then ``!done`` for the stream. Meanwhile the session serves other sentences.

Changes are found by polling the menu's own print (state file and kernel are read each time)
and comparing rows without their counters (a counter moving is not a change of the item).
A stream stops when its session ends, so a client that goes away leaves no thread behind.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .counters import ETHERNET_STATS, INTERFACE_STATS, LINK_DOWNS, TX_QUEUE_DROP
from .errors import CATEGORY_ARGUMENT, Trap
from .menus.base import Row

log = logging.getLogger(__name__)

#: How often listen and follow look for changes (seconds).
POLL_S = 0.2
#: How long a cancel or a session's end waits for a stream's thread.
JOIN_S = 5.0
#: Attributes that move by themselves; a change of them alone is not a change of the item.
VOLATILE = frozenset({*(a for a, _ in INTERFACE_STATS), *(a for a, _ in ETHERNET_STATS),
                      LINK_DOWNS, TX_QUEUE_DROP, "age", "uptime"})

Send = Callable[[str, Row | None, str | None], None]
Emit = Callable[[Row], None]
Body = Callable[[Emit, threading.Event], None]
Rows = Callable[[], list[Row]]

_TIME = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_time(prop: str, text: str) -> float:
    """A RouterOS time (``1``, ``200ms``, ``1m30s``, ``00:00:05``) in seconds."""
    if text.count(":") == 2 and all(p.replace(".", "").isdigit() for p in text.split(":")):
        h, m, s = (float(p) for p in text.split(":"))
        return h * 3600 + m * 60 + s
    pos, total = 0, 0.0
    for match in _TIME.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_S[match.group(2) or "s"]
        pos = match.end()
    if not text or pos != len(text):
        raise Trap(f"invalid value for argument {prop}", CATEGORY_ARGUMENT)
    return total


@dataclass(eq=False)
class Stream:
    tag: str | None
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    thread: threading.Thread | None = None
    #: it sent its own end (``!done``, or a trap and ``!done``): nothing to cancel any more
    finished: bool = False
    cancelled: bool = False


class Streams:
    """The running streams of one session; ``send`` writes one reply sentence (thread-safe)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._running: list[Stream] = []

    def start(self, tag: str | None, body: Body) -> None:
        stream = Stream(tag)
        stream.thread = threading.Thread(target=self._run, args=(stream, body),
                                         name=f"ros-stream-{tag}", daemon=True)
        with self._lock:
            self._running.append(stream)
        stream.thread.start()

    def _run(self, stream: Stream, body: Body) -> None:
        def emit(row: Row) -> None:
            self._send("!re", row, stream.tag)

        trap: Trap | None = None
        try:
            body(emit, stream.stop)
        except Trap as exc:
            trap = exc
        except OSError:  # the client went away: nothing to tell it
            stream.cancelled = True
        except Exception:  # a bug in a menu: end the stream as RouterOS ends a failed one
            log.exception("stream %s failed", stream.tag)
            trap = Trap("failure: internal error")
        with stream.lock:
            if stream.cancelled:
                self._forget(stream)
                return
            stream.finished = True
        self._forget(stream)
        try:
            if trap is not None:
                attrs = {} if trap.category is None else {"category": str(trap.category)}
                self._send("!trap", {**attrs, "message": trap.message}, stream.tag)
            self._send("!done", None, stream.tag)
        except OSError:
            pass

    def _forget(self, stream: Stream) -> None:
        with self._lock:
            if stream in self._running:
                self._running.remove(stream)

    def cancel(self, tag: str | None) -> list[Stream]:
        """Stop the streams tagged `tag` (None: all) and wait for them; those stopped (the
        caller sends their ``interrupted`` trap and ``!done``)."""
        with self._lock:
            targets = [s for s in self._running if tag is None or s.tag == tag]
        stopped: list[Stream] = []
        for stream in targets:
            with stream.lock:
                if stream.finished:
                    continue
                stream.cancelled = True
            stream.stop.set()
            if stream.thread is not None and stream.thread is not threading.current_thread():
                stream.thread.join(JOIN_S)
            self._forget(stream)
            stopped.append(stream)
        return stopped

    def stop_all(self) -> None:
        """The session ends: every stream stops, without a word to the client."""
        self.cancel(None)


# --- what a stream does -------------------------------------------------------------------------


def _key(row: Row, index: int) -> str:
    return row.get(".id") or f"#{index}"


def _steady(row: Row) -> Row:
    return {k: v for k, v in row.items() if k not in VOLATILE}


def changes(before: dict[str, Row], rows: list[Row]) -> tuple[dict[str, Row], list[Row]]:
    """(the rows by key now, what changed since `before`: changed or new rows, and
    ``.dead`` rows for those gone)."""
    now = {_key(r, i): r for i, r in enumerate(rows)}
    out = [r for k, r in now.items() if k not in before or _steady(before[k]) != _steady(r)]
    out += [{".id": k, ".dead": "true"} for k in before if k not in now and not k.startswith("#")]
    return now, out


def follow(rows: Rows, cut: Callable[[list[Row]], list[Row]], initial: bool,
           poll_s: float = POLL_S) -> Body:
    """``listen`` (`initial` False) and ``print follow``: each change of an item, as it comes.
    `rows` are whole rows (with ``.id``), `cut` what the client asked to see of them."""

    def body(emit: Emit, stop: threading.Event) -> None:
        seen, _ = changes({}, rows())
        if initial:
            for row in cut(list(seen.values())):
                emit(row)
        while not stop.wait(poll_s):
            seen, changed = changes(seen, rows())
            for row in changed:
                emit(row if ".dead" in row else cut([row])[0])

    return body


def repeat(rows: Rows, interval_s: float, duration_s: float | None = None) -> Body:
    """``print interval`` and ``monitor``: `rows` every `interval_s`, each round one
    ``.section``; after `duration_s` (if given) the stream ends with ``!done``."""

    def body(emit: Emit, stop: threading.Event) -> None:
        end = None if duration_s is None else time.monotonic() + duration_s
        section = 0
        while True:
            for row in rows():
                emit({**row, ".section": str(section)})
            section += 1
            if stop.wait(interval_s):
                return
            if end is not None and time.monotonic() >= end:
                return

    return body
