"""What the switch observes on its ports: LLDP neighbours and link up/down times.

The API server gathers them (``Observer``: two threads, started by ``ApiServer``): LLDP frames
from the backend's frame source into a ``NeighborTable``, link events from its rtnetlink source
into a ``LinkHistory``. Its menus read them from memory. After every change the server also
writes them atomically to a sidecar next to the state file (``crs804.json`` ->
``crs804.observed.json``), which the SSH CLI (its own process on the same state file) reads:
both show the same table and times. Each reader judges age and TTL against its own clock at
read time, so an entry that ran out is gone even before the server prunes it. Without a
running server the sidecar is absent (or left from the last run) and nothing is observed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .backend import Backend, FrameSource, LinkSource
from .clock import Clock
from .discovery import NeighborEntry, NeighborTable
from .lldp import Lldpdu, LldpError, parse_frame
from .netlink import LinkEvent, LinkHistory, LinkTimes
from .state import write_json_atomically

log = logging.getLogger(__name__)

#: How long an observer thread waits on its socket before it looks at its stop event.
POLL_S = 0.5


@dataclass(frozen=True)
class Observed:
    """A snapshot: every neighbour entry held (ages and TTLs judged by the reader) and each
    interface name's last link up/down times."""

    neighbors: tuple[NeighborEntry, ...] = ()
    links: Mapping[str, LinkTimes] = field(default_factory=dict)


class ObservedSource(Protocol):
    def observed(self) -> Observed: ...


def sidecar_path(state_path: str | os.PathLike[str]) -> Path:
    """``/run/fabric/L/crs804.json`` -> ``/run/fabric/L/crs804.observed.json``."""
    path = Path(state_path)
    return path.with_name(path.stem + ".observed.json")


def to_json(observed: Observed) -> dict[str, Any]:
    return {
        "neighbors": [asdict(e) for e in observed.neighbors],
        "links": {name: asdict(t) for name, t in sorted(observed.links.items())},
    }


def from_json(data: Mapping[str, Any]) -> Observed:
    neighbors = []
    for item in data.get("neighbors", []):
        body = dict(item)
        lldpdu = dict(body.pop("lldpdu"))
        lldpdu["management_addresses"] = tuple(lldpdu.get("management_addresses", ()))
        neighbors.append(NeighborEntry(lldpdu=Lldpdu(**lldpdu), **body))
    links = {str(k): LinkTimes(**v) for k, v in data.get("links", {}).items()}
    return Observed(tuple(neighbors), links)


class Sidecar:
    """The sidecar file: written by the API server, read by any process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def observed(self) -> Observed:
        """What the file holds; nothing when it is absent or unreadable."""
        try:
            return from_json(json.loads(self.path.read_text()))
        except (OSError, ValueError, TypeError, KeyError):
            return Observed()

    def write(self, observed: Observed) -> None:
        write_json_atomically(self.path, to_json(observed))


class Observations:
    """The server's table and link history (thread-safe), published to ``sidecar``."""

    def __init__(self, clock: Clock, sidecar: Sidecar | None = None) -> None:
        self.clock = clock
        self.sidecar = sidecar
        self.table = NeighborTable()
        self.history = LinkHistory()
        self._lock = threading.Lock()
        self._publishing = threading.Lock()

    def hear(self, interface: str, frame: bytes) -> bool:
        """One received frame; False (and nothing learnt) when it is not a valid LLDPDU."""
        try:
            parsed = parse_frame(frame)
        except LldpError as exc:
            log.debug("LLDP frame on %s ignored: %s", interface, exc)
            return False
        self.table.learn(interface, parsed.source_mac, parsed.lldpdu, self.clock())
        return True

    def links(self, events: list[LinkEvent]) -> bool:
        """Link events, in order; whether any link came up or went down."""
        now = self.clock()
        with self._lock:
            return any([self.history.observe(e, now) for e in events])

    def expire(self) -> bool:
        return self.table.expire(self.clock())

    def observed(self) -> Observed:
        entries, _ = self.table.snapshot()
        with self._lock:
            times = self.history.times()
        return Observed(tuple(sorted(entries, key=lambda e: int(e.id[1:], 16))), times)

    def publish(self) -> None:
        """Write the sidecar (serialised: the last writer has the latest snapshot)."""
        if self.sidecar is None:
            return
        with self._publishing:
            self.sidecar.write(self.observed())


class Observer:
    """The threads that feed ``observations`` from the backend's LLDP and link sources.

    ``start`` opens both sources and takes the link dump before it returns (a link that has
    carrier at start-up came up then), so a client served after it sees every time.
    """

    def __init__(self, backend: Backend, observations: Observations,
                 poll_s: float = POLL_S) -> None:
        self.backend = backend
        self.observations = observations
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sources: list[FrameSource | LinkSource] = []

    def start(self) -> None:
        frames = self.backend.open_lldp()
        self._sources.append(frames)
        links = self.backend.open_links()
        self._sources.append(links)
        self.observations.links(links.dump())
        self.observations.publish()
        self._spawn("lldp-receiver", lambda: self._frames(frames))
        self._spawn("link-watch", lambda: self._links(links))

    def _spawn(self, name: str, step: Callable[[], bool]) -> None:
        thread = threading.Thread(target=self._run, args=(name, step), name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _frames(self, source: FrameSource) -> bool:
        heard = [self.observations.hear(name, frame) for name, frame in source.recv(self.poll_s)]
        return self.observations.expire() or any(heard)

    def _links(self, source: LinkSource) -> bool:
        return self.observations.links(source.recv(self.poll_s))

    def _run(self, name: str, step: Callable[[], bool]) -> None:
        """``step`` until stopped; a change is published. A failure never ends the thread."""
        while not self._stop.is_set():
            try:
                if step():
                    self.observations.publish()
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("%s step failed", name)
                self._stop.wait(self.poll_s)

    def stop(self) -> None:
        """Stop the threads; closing the sources wakes those that wait on them."""
        self._stop.set()
        for source in self._sources:
            with contextlib.suppress(OSError):
                source.close()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
