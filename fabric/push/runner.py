"""Run one push task over a set of hosts (bounded threads) and split results from failures."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from nornir.core import Nornir
from nornir.core.task import AggregatedResult

from fabric.collect.gather import describe_failure
from fabric.remote.nornir_setup import make_nornir
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
    """Run `task` on `hosts`; (host -> result, host -> scrubbed failure reason).

    `per_host(host)` gives that host's keyword arguments. With `nornir` (one per push run) the
    hosts' open connections are reused and left open; without, each host's are closed.
    """
    if not hosts:
        return {}, {}
    logging.getLogger("nornir").addHandler(logging.NullHandler())
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
    agg: AggregatedResult = nr.run(task=one, name=getattr(task, "__name__", "push"),
                                   raise_on_error=False, on_failed=True)
    results: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for host in hosts:
        multi = agg.get(host)
        if multi is None:
            errors[host] = "not in the inventory"
            continue
        inner = multi[0]
        if multi.failed and inner.exception is None and isinstance(inner.result, list):
            results[host] = inner.result  # a task that reports problems as its result
            continue
        if multi.failed:
            exc = next((r.exception for r in multi if r.exception is not None), None)
            reason = describe_failure(exc) if exc is not None else str(inner.result)
            errors[host] = target.credentials.scrub(reason)
        else:
            results[host] = inner.result
    return results, errors
