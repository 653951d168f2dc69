"""An optional hook on sustained trouble (off unless `--hook CMD` is given): CMD runs once
when a cable's link-downs rose in each of N cycles in a row (`flapping`) or a host was not
read for N cycles in a row (`host-gone`), and again only after that condition cleared.

CMD runs without a shell (split like a shell line), detached, with FABRIC_WATCH_EVENT
(`flapping` | `host-gone`) and FABRIC_WATCH_SUBJECT (the cable's link id, or the host) in its
environment; its output goes to watch's stderr. Watch never waits for it."""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field

from prometheus_client.core import Metric

log = logging.getLogger("fabric.watch")


def _by(metrics: Iterable[Metric], family: str, label: str) -> dict[str, float]:
    """The largest value of `family` per `label` value."""
    out: dict[str, float] = {}
    for fam in metrics:
        if fam.name != family:
            continue
        for s in fam.samples:
            key = s.labels.get(label, "")
            out[key] = max(out.get(key, s.value), s.value)
    return out


@dataclass
class SustainedHook:
    command: str
    cycles: int = 3
    _last_downs: dict[str, float] = field(default_factory=dict)
    _streak: dict[tuple[str, str], int] = field(default_factory=dict)
    _fired: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not shlex.split(self.command):
            raise ValueError("--hook: give a command")
        if self.cycles < 1:
            raise ValueError("--hook-cycles: give 1 or more")

    def observe(self, metrics: list[Metric]) -> list[tuple[str, str]]:
        """Note one cycle's metrics; the (event, subject) pairs the hook ran for now."""
        downs = _by(metrics, "fabric_link_downs", "cable")
        now: dict[tuple[str, str], bool] = {}
        for cable, value in downs.items():
            before = self._last_downs.get(cable)
            now["flapping", cable] = before is not None and value > before
        self._last_downs.update(downs)
        for host, up in _by(metrics, "fabric_watch_up", "host").items():
            now["host-gone", host] = up == 0
        ran = []
        for key, bad in now.items():
            self._streak[key] = self._streak.get(key, 0) + 1 if bad else 0
            if not bad:
                self._fired.discard(key)
            elif self._streak[key] >= self.cycles and key not in self._fired:
                self._fired.add(key)
                self._run(*key)
                ran.append(key)
        return ran

    def _run(self, event: str, subject: str) -> None:
        env = {**os.environ, "FABRIC_WATCH_EVENT": event, "FABRIC_WATCH_SUBJECT": subject}
        log.warning("hook: %s %s", event, subject)
        try:
            subprocess.Popen(shlex.split(self.command), env=env, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        except OSError as exc:
            log.warning("hook: could not run %s: %s", self.command, exc.strerror or exc)
