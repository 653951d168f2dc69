"""A push run's Nornir and its tasks over a set of hosts (bounded threads), on the one runner."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from nornir.core import Nornir

from fabric.remote.nornir_setup import make_nornir
from fabric.remote.runner import run
from fabric.target import Target

#: At most this many hosts are worked on at once (override with --workers).
DEFAULT_WORKERS = 4


@contextlib.contextmanager
def push_session(target: Target, hosts: list[str], workers: int) -> Iterator[Nornir]:
    """One Nornir for a whole push run: each host's connection is opened once, reused by every
    step (facts, snapshot, apply, verify, rollback) and closed at the end."""
    nr = make_nornir(target, hosts, workers=max(1, workers))
    try:
        yield nr
    finally:
        nr.close_connections()


def run_task(target: Target, hosts: list[str], task: Callable[..., Any], workers: int,
             per_host: Callable[[str], dict[str, Any]] | None = None,
             dry_run: bool = False, nornir: Nornir | None = None
             ) -> tuple[dict[str, Any], dict[str, str]]:
    """Run `task` on `hosts` (`fabric.remote.runner.run`); (host -> result, host -> scrubbed
    failure reason).

    `per_host(host)` gives that host's keyword arguments. With `nornir` (one per push run) the
    hosts' open connections are reused and left open; without, each host's are closed.
    """
    if not hosts:
        return {}, {}
    wanted = set(hosts)
    nr = (make_nornir(target, hosts, workers=max(1, workers)) if nornir is None
          else nornir.filter(filter_func=lambda h: h.name in wanted))
    args = per_host or (lambda _h: {})

    def one(task_: Any) -> Any:
        try:
            return task(task_, **args(task_.host.name))
        finally:
            if nornir is None:
                task_.host.close_connections()

    nr.data.dry_run = dry_run
    # on_failed: a shared Nornir remembers hosts that failed verification; rollback must run.
    return run(nr, one, hosts=hosts, name=getattr(task, "__name__", "push"), on_failed=True,
               scrub=target.credentials.scrub)
