"""Run one push task over a set of hosts (bounded threads) and split results from failures."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from nornir.core.task import AggregatedResult

from fabric.collect import describe_failure
from fabric.nornir_setup import make_nornir
from fabric.target import Target

#: At most this many hosts are worked on at once (override with --workers).
DEFAULT_WORKERS = 4


def run_task(target: Target, hosts: list[str], task: Callable[..., Any], workers: int,
             per_host: Callable[[str], dict[str, Any]] | None = None,
             dry_run: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
    """Run `task` on `hosts`; (host -> result, host -> scrubbed failure reason).

    `per_host(host)` gives that host's keyword arguments.
    """
    if not hosts:
        return {}, {}
    logging.getLogger("nornir").addHandler(logging.NullHandler())
    nr = make_nornir(target, hosts, workers=max(1, workers))
    args = per_host or (lambda _h: {})

    def one(task_: Any) -> Any:
        try:
            return task(task_, **args(task_.host.name))
        finally:
            task_.host.close_connections()

    nr.data.dry_run = dry_run
    agg: AggregatedResult = nr.run(task=one, name=getattr(task, "__name__", "push"),
                                   raise_on_error=False)
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
