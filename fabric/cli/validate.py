"""`fabric validate`: facts, active probes and every check; a report on the terminal and in
files. Exit 0 passed, 1 a check failed or errored on a host that answered, 2 bad usage, 3 the
run could not complete (some host could not be read, and nothing else failed)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target
from fabric.errors import InputError, RunIncomplete

if TYPE_CHECKING:
    from fabric.intent.model import Intent
    from fabric.report.model import Report

OnlyOpt = typer.Option(None, "--only", help="Comma-separated families or checks, e.g. "
                       "link,mtu,bw (default: all).")
JsonOpt = typer.Option(None, "--json", help="Write the report JSON to FILE ('-' = stdout).")
JunitOpt = typer.Option(None, "--junit", help="Write a JUnit XML report to FILE.")
HtmlOpt = typer.Option(None, "--html", help="Write an HTML report (with the picture) to FILE.")
MdOpt = typer.Option(None, "--md", help="Write a Markdown report to FILE.")
HostsOpt = typer.Option(None, "--hosts", help="Comma-separated hosts: validate only them and "
                        "the cables among them (a Spark's switch lane included).")
DurationOpt = typer.Option(None, "--duration", min=0.5, help="Seconds per bandwidth test "
                           "(default: the link profile's bandwidth_test_s, in profiles.yaml).")
TimingsOpt = typer.Option(None, "--timings", help="Write where the run's time went (each "
                          "phase's seconds) as JSON to FILE.")

def _only(value: str | None) -> set[str] | None:
    if value is None:
        return None
    names = {v.strip() for v in value.split(",") if v.strip()}
    if not names:
        raise InputError("--only: name at least one family or check")
    return names


def _hosts(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = list(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    if not names:
        raise InputError("--hosts: name at least one host")
    return names


def _write_files(report: Report, intent: Intent, json_out: str | None, junit: Path | None,
                 html: Path | None, md: Path | None) -> None:
    from fabric.report import write_html, write_json, write_junit, write_markdown

    if json_out is not None:
        write_json(report, None if json_out == "-" else Path(json_out))
    if junit is not None:
        write_junit(report, junit)
    if md is not None:
        write_markdown(report, md)
    if html is not None:
        write_html(report, intent, html)


def validate_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
                 topology: str | None = TopologyOpt, only: str | None = OnlyOpt,
                 json_out: str | None = JsonOpt, junit: Path | None = JunitOpt,
                 html: Path | None = HtmlOpt, md: Path | None = MdOpt,
                 duration: float | None = DurationOpt, hosts: str | None = HostsOpt,
                 timings: Path | None = TimingsOpt) -> None:
    """Validate a fabric: facts, ping matrix, bandwidth rounds, nccl-tests, every check; a
    report. `--hosts` narrows it to those hosts and the cables among them.

    Exit 0 when everything passed, 1 when a check failed or errored on a host that answered,
    2 on bad usage (an unknown family lists the families), 3 when the run could not complete:
    some host could not be read (one `host.reachable` row each, with the reason) and nothing
    else failed. The gate opens on neither 1 nor 3.
    """
    began = time.time()
    from fabric.cli import settled_imports

    with settled_imports():  # the collector would only rescan what they make (~0.05 s)
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from fabric.cli import err_console
        from fabric.gate import default_report_path
        from fabric.report import print_terminal, write_json
        from fabric.report.model import exit_code
        from fabric.validate import Phases, host_scope, run_validation, selected_families
    imported = time.time()
    phases = Phases()
    selected = _only(only)
    selected_families(selected)  # unknown names: exit 2 before touching the network
    scoped = _hosts(hosts)
    target = resolve_target(lab, inventory, topology)
    if scoped is not None:
        host_scope(target.intent, scoped)  # unknown hosts: exit 2, named
    phases.mark("intent")
    columns = (SpinnerColumn(), TextColumn("{task.description:<16}"),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn())
    # Redrawn live on a terminal only (4 Hz); elsewhere drawn once, at the end: the refresh
    # thread would spend CPU the probes' hosts are sharing.
    live = err_console.is_terminal
    with Progress(*columns, console=err_console, transient=False, auto_refresh=live,
                  refresh_per_second=4) as progress:
        report, facts = run_validation(target, selected, progress, duration_s=duration,
                                       say=progress.console.print, hosts=scoped,
                                       phases=phases)
    print_terminal(report, err_console)
    if facts.errors:
        err_console.print("unreachable: " + "; ".join(
            f"{h}: {r}" for h, r in sorted(facts.errors.items())), style="yellow")
    _write_files(report, target.intent, json_out, junit, html, md)
    if scoped is not None:
        err_console.print("--hosts: a partial validation; the report for `fabric gate` is "
                          "left as it was", style="dim")
    else:
        # Always replaced, also when nothing answered: an older pass must never open the gate.
        default = default_report_path(target.lab)
        write_json(report, default)
        err_console.print(f"report saved for `fabric gate`: {default}", style="dim")
        if selected is not None:
            err_console.print("--only: `fabric gate` opens only on a report that judged every "
                              "family", style="dim")
    phases.mark("report")
    if timings is not None:
        bound = report.schedule.get("lower_bound_s")
        timings.write_text(json.dumps({"command_unix": round(began, 3),
                                       "imports_s": round(imported - began, 3),
                                       **phases.to_dict(),
                                       "bandwidth_lower_bound_s": bound}, indent=2) + "\n")
    why = "; ".join(f"{h}: {r}" for h, r in sorted(facts.errors.items())) or "no hosts"
    if not facts.sparks and facts.switch is None:
        raise RunIncomplete(f"no host could be reached: {why}")
    code = exit_code(report)
    if code == 3:
        raise RunIncomplete(f"the run could not complete, unreachable: {why}")
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)
