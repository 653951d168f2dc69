"""The watch loop: a cycle every interval, its samples served over HTTP (prometheus_client)
and/or written to a node_exporter textfile, atomically."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server, write_to_textfile
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from fabric.intent.model import Intent
from fabric.watch.collect import Poller
from fabric.watch.drift import Fingerprint, drift
from fabric.watch.hook import SustainedHook
from fabric.watch.metrics import cycle_metrics
from fabric.watch.optics import gpu_metrics, switch_metrics

#: The textfile's name in `--textfile DIR` (node_exporter reads DIR/*.prom).
TEXTFILE = "fabric_watch.prom"


class LastCycle(Collector):
    """A Collector that yields the last cycle's samples (none before the first cycle)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._metrics: list[Metric] = []

    def update(self, metrics: list[Metric]) -> None:
        with self._lock:
            self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            yield from self._metrics


def registry_with(collector: LastCycle) -> CollectorRegistry:
    """A registry of its own: only watch's metrics, none of the process's defaults."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def run_cycle(poller: Poller, intent: Intent, interval: float,
              gate: Fingerprint | None = None) -> tuple[list[Metric], float]:
    """One cycle: read every host, build the samples (with `gate`: the drift from that
    fingerprint); (metrics, seconds it took)."""
    t0 = time.monotonic()
    readings, statuses = poller.cycle()
    took = time.monotonic() - t0
    metrics = cycle_metrics(intent, readings, statuses, took, interval, time.time())
    metrics += [*switch_metrics(intent, readings), *gpu_metrics(readings)]
    if gate is not None:
        metrics.append(drift(intent, gate, readings))
    return metrics, took


def write_textfile(directory: Path, registry: CollectorRegistry) -> Path:
    """The registry's samples as DIR/fabric_watch.prom, written to a temporary file and
    renamed over it (node_exporter never reads a half-written file)."""
    path = directory / TEXTFILE
    write_to_textfile(str(path), registry)
    return path


def parse_listen(text: str) -> tuple[str, int]:
    """`ADDR:PORT` (or `[V6]:PORT`, or `:PORT` for every address) as (addr, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--listen wants ADDR:PORT, got {text!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(poller: Poller, intent: Intent, interval: float, listen: tuple[str, int] | None,
          textfile: Path | None, once: bool,
          on_cycle: Callable[[float, dict[str, Any]], None] | None = None,
          stop: threading.Event | None = None, gate: Fingerprint | None = None,
          hook: SustainedHook | None = None) -> None:
    """Run cycles every `interval` s until `stop` is set (or once, with `once`)."""
    stop = stop or threading.Event()
    last = LastCycle()
    registry = registry_with(last)
    server: Any = None
    try:
        if listen is not None:
            server = start_http_server(listen[1], addr=listen[0], registry=registry)
        while True:
            started = time.monotonic()
            metrics, took = run_cycle(poller, intent, interval, gate)
            last.update(metrics)
            if hook is not None:
                hook.observe(metrics)
            if textfile is not None:
                write_textfile(textfile, registry)
            if on_cycle is not None:
                on_cycle(took, {"metrics": len(metrics)})
            if once or stop.wait(max(0.0, interval - (time.monotonic() - started))):
                return
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                server[0].shutdown()
        poller.close()
