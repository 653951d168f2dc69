"""Per-host push locks: two pushes (or a push and a rollback) never interleave on a host."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from fabric.errors import RunIncomplete


class HostLocked(RunIncomplete):
    """Another push holds the lock of a host (exit 3)."""


def _lock_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".lock"


class HostLocks:
    """Non-blocking flock()s on `<dir>/<key>.lock`, one per host; released on close."""

    def __init__(self, directory: Path, run_id: str) -> None:
        self.directory = directory
        self.run_id = run_id
        self._held: list[IO[str]] = []

    def acquire(self, keys: dict[str, str]) -> None:
        """Lock every host (name -> unique key, e.g. its address); HostLocked if one is held."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for host, key in sorted(keys.items()):
            fh = open(self.directory / _lock_name(key), "a+")  # noqa: SIM115 - held until close
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "another process"
                fh.close()
                self.close()
                raise HostLocked(f"{host} is locked by {holder}; wait for that push to finish "
                                 f"(lock file {self.directory / _lock_name(key)})") from None
            fh.seek(0)
            fh.truncate()
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            fh.write(f"push run {self.run_id} (pid {os.getpid()}) since {now}\n")
            fh.flush()
            self._held.append(fh)

    def close(self) -> None:
        for fh in self._held:
            with contextlib.suppress(OSError):
                fh.seek(0)
                fh.truncate()
                fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()
        self._held.clear()


@contextlib.contextmanager
def host_locks(directory: Path, run_id: str, keys: dict[str, str]) -> Iterator[HostLocks]:
    locks = HostLocks(directory, run_id)
    locks.acquire(keys)
    try:
        yield locks
    finally:
        locks.close()
