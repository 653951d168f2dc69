"""`fabric watch`: keep reading the fabric after the gate and expose it to Prometheus."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target
from fabric.errors import InputError, RunIncomplete

ListenOpt = typer.Option(None, "--listen", help="Serve /metrics on ADDR:PORT "
                         "(e.g. 127.0.0.1:9808).")
IntervalOpt = typer.Option(15.0, "--interval", help="Seconds between reads of the fabric.")
TimeoutOpt = typer.Option(None, "--timeout", help="Seconds a cycle waits for a host "
                          "(default: 80% of the interval, at most 10).")
TextfileOpt = typer.Option(None, "--textfile", help="Write DIR/fabric_watch.prom every cycle "
                           "(node_exporter's textfile collector), atomically.")
ReportOpt = typer.Option(None, "--report", help="The gate's report whose fingerprint "
                         "fabric_gate_drift compares with (default: the last `fabric "
                         "validate` report of the lab or site, when there is one).")
HookOpt = typer.Option(None, "--hook", help="Run CMD once when a cable flaps or a host is "
                       "gone for --hook-cycles cycles in a row (FABRIC_WATCH_EVENT, "
                       "FABRIC_WATCH_SUBJECT in its environment). Off by default.")
HookCyclesOpt = typer.Option(3, "--hook-cycles", help="Cycles in a row before --hook runs.")
OnceOpt = typer.Option(False, "--once", help="One cycle, then exit (0: every host answered, "
                       "3: some did not).")


def _checked(interval: float, timeout: float | None, listen: str | None,
             textfile: Path | None, once: bool) -> tuple[float, tuple[str, int] | None]:
    from fabric.watch.serve import parse_listen

    if not 0.5 <= interval <= 3600:
        raise InputError(f"--interval {interval:g}: give 0.5 to 3600 seconds")
    wait = timeout if timeout is not None else min(10.0, max(0.4, interval * 0.8))
    if not 0 < wait <= interval:
        raise InputError(f"--timeout {wait:g}: give more than 0 and at most the interval")
    if textfile is not None and not textfile.is_dir():
        raise InputError(f"--textfile {textfile}: not a directory")
    try:
        where = parse_listen(listen) if listen is not None else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if where is None and textfile is None and not once:
        raise InputError("nothing to do: give --listen ADDR:PORT, --textfile DIR or --once")
    return wait, where


def watch_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
              topology: str | None = TopologyOpt, listen: str | None = ListenOpt,
              interval: float = IntervalOpt, timeout: float | None = TimeoutOpt,
              textfile: Path | None = TextfileOpt, once: bool = OnceOpt,
              report_file: Path | None = ReportOpt, hook: str | None = HookOpt,
              hook_cycles: int = HookCyclesOpt) -> None:
    """Read every Spark (one SSH session each, kept open) and the switch (one API session)
    every interval; serve the samples on --listen and/or write them to --textfile.

    With --once: one cycle (printed to stdout unless --listen/--textfile), exit 3 naming the
    hosts that did not answer."""
    from fabric.cli import err_console

    wait, where = _checked(interval, timeout, listen, textfile, once)
    target = resolve_target(lab, inventory, topology)
    gate = _gate(report_file, lab)
    sustained = _hook(hook, hook_cycles)
    poller = _poller(target, wait)
    stop = threading.Event()
    if not once:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    statuses: dict[str, Any] = {}

    def report(took: float, _: dict[str, Any]) -> None:
        statuses.update(poller.last_statuses)
        if once:
            err_console.print(f"cycle: {took:.3f}s")

    if where is not None:
        err_console.print(f"serving http://{where[0]}:{where[1]}/metrics every {interval:g}s")
    try:
        _serve(poller, target, interval, where, textfile, once, report, stop, gate, sustained)
    except OSError as exc:
        raise InputError(f"--listen {listen}: {exc.strerror or exc}") from None
    if once:
        down = {h: s.error for h, s in statuses.items() if not s.up}
        if down:
            why = "; ".join(f"{h}: {r}" for h, r in sorted(down.items()))
            raise RunIncomplete(f"{len(down)} host(s) did not answer: {why}")


def _hook(command: str | None, cycles: int) -> Any:
    if command is None:
        return None
    from fabric.watch.hook import SustainedHook

    try:
        return SustainedHook(command, cycles)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _gate(report_file: Path | None, lab: str | None) -> Any:
    from fabric.gate import default_report_path
    from fabric.watch.drift import load_fingerprint

    if report_file is not None and not report_file.is_file():
        raise InputError(f"--report {report_file}: no such file")
    path = report_file or default_report_path(lab)
    return load_fingerprint(path) if report_file or path.is_file() else None


def _poller(target: Any, wait: float) -> Any:
    from fabric.remote.nornir_setup import make_nornir
    from fabric.watch.collect import Poller

    return Poller(make_nornir(target), target.intent, wait)


def _serve(poller: Any, target: Any, interval: float, where: tuple[str, int] | None,
           textfile: Path | None, once: bool, report: Any, stop: threading.Event,
           gate: Any, hook: Any) -> None:
    from fabric.watch.serve import registry_with, serve

    if once and where is None and textfile is None:
        from prometheus_client import generate_latest

        from fabric.watch.serve import LastCycle, run_cycle

        last = LastCycle()
        try:
            metrics, took = run_cycle(poller, target.intent, interval, gate)
        finally:
            poller.close()
        last.update(metrics)
        report(took, {})
        typer.echo(generate_latest(registry_with(last)).decode(), nl=False)
        return
    serve(poller, target.intent, interval, where, textfile, once, report, stop, gate=gate,
          hook=hook)


def register(app: typer.Typer) -> None:
    app.command("watch")(watch_cmd)
