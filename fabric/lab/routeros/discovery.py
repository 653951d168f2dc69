"""The LLDP neighbour table, as RouterOS's discovery service keeps it.

An entry is keyed by (the interface the frame arrived on, chassis id, port id). Each frame
refreshes its entry's last-heard time and TTL; an entry not heard for its TTL is gone; a frame
with TTL 0 (a neighbour shutting down) removes its entry at once. Nothing else removes one: a
link going down, a rename or a new neighbour on the same port leave older entries to age out
(field fact: after a re-plug both ends list the old neighbour until its TTL runs out). An
entry's ``.id`` stays the same for its lifetime.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from .lldp import Lldpdu

Key = tuple[str, int, str, int, str]


@dataclass(frozen=True)
class NeighborEntry:
    """One neighbour: where and when it was heard, and its last LLDPDU."""

    id: str
    interface: str
    mac_address: str
    lldpdu: Lldpdu
    first_heard: float
    last_heard: float

    @property
    def key(self) -> Key:
        d = self.lldpdu
        return (self.interface, d.chassis_subtype, d.chassis_id, d.port_subtype, d.port_id)

    def expired(self, now: float) -> bool:
        return now - self.last_heard >= self.lldpdu.ttl

    def age(self, now: float) -> float:
        return max(0.0, now - self.last_heard)


def current(entries: tuple[NeighborEntry, ...] | list[NeighborEntry],
            now: float) -> list[NeighborEntry]:
    """The entries whose TTL has not run out at ``now``, by id."""
    return sorted((e for e in entries if not e.expired(now)), key=lambda e: int(e.id[1:], 16))


class NeighborTable:
    """Thread-safe; every method takes the time (``now``) from its caller's clock."""

    def __init__(self) -> None:
        self._entries: dict[Key, NeighborEntry] = {}
        self._next_id = 1
        self._lock = threading.Lock()

    def _expire(self, now: float) -> bool:
        gone = [k for k, e in self._entries.items() if e.expired(now)]
        for key in gone:
            del self._entries[key]
        return bool(gone)

    def expire(self, now: float) -> bool:
        """Drop the entries whose TTL ran out; whether any did."""
        with self._lock:
            return self._expire(now)

    def learn(self, interface: str, mac_address: str, lldpdu: Lldpdu, now: float) -> None:
        """One frame heard on ``interface`` (its name when the frame arrived)."""
        with self._lock:
            self._expire(now)
            probe = NeighborEntry("", interface, mac_address, lldpdu, now, now)
            old = self._entries.get(probe.key)
            if lldpdu.ttl == 0:
                self._entries.pop(probe.key, None)
            elif old is not None:
                self._entries[probe.key] = replace(old, mac_address=mac_address, lldpdu=lldpdu,
                                                   last_heard=now)
            else:
                self._entries[probe.key] = replace(probe, id=f"*{self._next_id:X}")
                self._next_id += 1

    def entries(self, now: float) -> list[NeighborEntry]:
        with self._lock:
            return current(list(self._entries.values()), now)

    def snapshot(self) -> tuple[tuple[NeighborEntry, ...], int]:
        """Every entry still held (expired or not) and the next id, for the sidecar."""
        with self._lock:
            return tuple(self._entries.values()), self._next_id
