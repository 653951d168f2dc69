"""Who is logged in to the API server now (``/user/active``): one entry per API session of
this server process, from its login until it ends. The SSH console runs as its own process
per login and is not listed."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class ActiveUser:
    id: str
    name: str
    address: str
    via: str
    group: str
    when: float


class ActiveUsers:
    """Thread-safe: every API session logs in and out here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 1
        self._users: dict[str, ActiveUser] = {}
        #: user name -> the time of its last login (``/user`` ``last-logged-in``)
        self.last_login: dict[str, float] = {}

    def login(self, name: str, address: str, via: str, when: float,
              group: str = "full") -> str:
        with self._lock:
            entry = ActiveUser(f"*{self._next:X}", name, address, via, group, when)
            self._next += 1
            self._users[entry.id] = entry
            self.last_login[name] = when
            return entry.id

    def logout(self, entry: str) -> None:
        with self._lock:
            self._users.pop(entry, None)

    def now(self) -> list[ActiveUser]:
        with self._lock:
            return list(self._users.values())
