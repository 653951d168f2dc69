"""`fabric validate`: facts, active probes and every check; a report on the terminal and in
files. Exit 0 passed, 1 a check failed or errored on a host that answered, 2 bad usage, 3 the
run could not complete (some host could not be read, and nothing else failed)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target
from fabric.errors import InputError, RunIncomplete

if TYPE_CHECKING:
    from fabric.facts import Facts
    from fabric.intent.model import Intent
    from fabric.report.model import Report
    from fabric.target import Target
    from fabric.validate import Phases

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
PlanOpt = typer.Option(False, "--plan", help="Print what the run would collect and probe, on "
                       "which hosts, in which bursts, and exit without connecting to any host "
                       "(with --json FILE: the plan as JSON).")

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
                 html: Path | None, md: Path | None, json_text: str | None = None) -> None:
    """The reports asked for; `json_text`: the report's JSON, where already made."""
    import fabric.report as writers  # each writer's module loads when asked for (PEP 562)

    if json_out is not None:
        writers.write_json(report, None if json_out == "-" else Path(json_out), json_text)
    if junit is not None:
        writers.write_junit(report, junit)
    if md is not None:
        writers.write_markdown(report, md)
    if html is not None:
        writers.write_html(report, intent, html)


def _print_plan(lab: str | None, inventory: Path | None, topology: str | None,
                selected: set[str] | None, hosts: str | None, duration: float | None,
                json_out: str | None, reports: list[object]) -> None:
    """`--plan`: the plan as text on stdout (on stderr when `--json -` takes stdout), and as
    JSON where `--json` says; no host is connected to."""
    from fabric.cli import err_console
    from fabric.cli.common import write_output
    from fabric.validate import plan_validation, selected_families

    if any(r is not None for r in reports):
        raise InputError("--plan writes no report: drop --junit/--html/--md/--timings")
    selected_families(selected)  # unknown names: exit 2 before reading the topology
    scoped = _hosts(hosts)
    target = resolve_target(lab, inventory, topology)
    plan, _ = plan_validation(target, selected, scoped, duration)
    if json_out == "-":
        err_console.print(plan.to_text(), end="", markup=False, highlight=False)
    else:
        write_output(plan.to_text(), None)
    if json_out is not None:
        write_output(plan.to_json(), None if json_out == "-" else Path(json_out))


def _save_for_gate(report: Report, lab: str | None, partial: bool, only: bool,
                   json_text: str | None = None) -> None:
    """The report `fabric gate` reads, unless the run was partial (`--hosts`); `json_text`:
    the report's JSON, where already made."""
    from fabric.cli import err_console
    from fabric.gate import default_report_path
    from fabric.report import write_json

    if partial:
        err_console.print("--hosts: a partial validation; the report for `fabric gate` is "
                          "left as it was", style="dim")
        return
    # Always replaced, also when nothing answered: an older pass must never open the gate.
    default = default_report_path(lab)
    write_json(report, default, json_text)
    err_console.print(f"report saved for `fabric gate`: {default}", style="dim")
    if only:
        err_console.print("--only: `fabric gate` opens only on a report that judged every "
                          "family", style="dim")


def _write_timings(timings: Path, report: Report, began: float, imported: float,
                   phases: Phases) -> None:
    bound = report.schedule.get("lower_bound_s")
    timings.write_text(json.dumps({"command_unix": round(began, 3),
                                   "imports_s": round(imported - began, 3),
                                   **phases.to_dict(),
                                   "bandwidth_lower_bound_s": bound}, indent=2) + "\n")


def say_unreachable(facts: Facts) -> None:
    """One line naming the hosts that could not be read, with their reasons as they are
    (text, not rich markup: a `[sudo]` in a reason stays)."""
    from fabric.cli import err_console

    if facts.errors:
        err_console.print("unreachable: " + "; ".join(
            f"{h}: {r}" for h, r in sorted(facts.errors.items())), style="yellow",
            markup=False, highlight=False)


def _exit(report: Report, facts: Facts) -> NoReturn:
    from fabric.report.model import exit_code

    why = "; ".join(f"{h}: {r}" for h, r in sorted(facts.errors.items())) or "no hosts"
    if not facts.sparks and facts.switch is None:
        raise RunIncomplete(f"no host could be reached: {why}")
    code = exit_code(report)
    if code == 3:
        raise RunIncomplete(f"the run could not complete, unreachable: {why}")
    raise typer.Exit(code)


def _run(target: Target, selected: set[str] | None, scoped: list[str] | None,
         duration: float | None, phases: Phases) -> tuple[Report, Facts]:
    """The validation under a progress display on stderr."""
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    from fabric.cli import err_console
    from fabric.report.progress import RunProgress
    from fabric.validate import run_validation

    columns = (SpinnerColumn(), TextColumn("{task.description:<16}"),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn())
    # Redrawn live on a terminal only (4 Hz); elsewhere drawn once, at the end: the refresh
    # thread would spend CPU the probes' hosts are sharing.
    live = err_console.is_terminal
    with RunProgress(*columns, console=err_console, transient=False, auto_refresh=live,
                  refresh_per_second=4) as progress:
        return run_validation(target, selected, progress, duration_s=duration,
                              say=progress.console.print, hosts=scoped, phases=phases)


def validate_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
                 topology: str | None = TopologyOpt, only: str | None = OnlyOpt,
                 json_out: str | None = JsonOpt, junit: Path | None = JunitOpt,
                 html: Path | None = HtmlOpt, md: Path | None = MdOpt,
                 duration: float | None = DurationOpt, hosts: str | None = HostsOpt,
                 timings: Path | None = TimingsOpt, plan: bool = PlanOpt) -> None:
    """Validate a fabric: facts, ping matrix, bandwidth rounds, nccl-tests, every check; a
    report. `--hosts` narrows it to those hosts and the cables among them; `--plan` prints
    what would run, where and in what order, touching no host (exit 0, 2 on bad input).

    Exit 0 when everything passed, 1 when a check failed or errored on a host that answered,
    2 on bad usage (an unknown family lists the families), 3 when the run could not complete:
    some host could not be read (one `host.reachable` row each, with the reason) and nothing
    else failed. The gate opens on neither 1 nor 3.
    """
    began = time.time()
    selected = _only(only)
    if plan:
        _print_plan(lab, inventory, topology, selected, hosts, duration, json_out,
                    [junit, html, md, timings])
        return
    from fabric.cli import settled_imports

    with settled_imports():  # the collector would only rescan what they make (~0.05 s)
        import rich.progress  # noqa: F401  (each imported before the clock stops)

        import fabric.gate
        import fabric.report.model  # noqa: F401
        from fabric.cli import err_console
        from fabric.report import print_terminal, report_to_json
        from fabric.validate import Phases, host_scope, selected_families
    imported = time.time()
    phases = Phases()
    selected_families(selected)  # unknown names: exit 2 before touching the network
    scoped = _hosts(hosts)
    target = resolve_target(lab, inventory, topology)
    if scoped is not None:
        host_scope(target.intent, scoped)  # unknown hosts: exit 2, named
    phases.mark("intent")
    report, facts = _run(target, selected, scoped, duration, phases)
    print_terminal(report, err_console)
    say_unreachable(facts)
    # The JSON is made once for `--json` and the gate's copy.
    json_text = (report_to_json(report) if json_out is not None and scoped is None else None)
    _write_files(report, target.intent, json_out, junit, html, md, json_text)
    _save_for_gate(report, target.lab, scoped is not None, selected is not None, json_text)
    phases.mark("report")
    if timings is not None:
        _write_timings(timings, report, began, imported, phases)
    _exit(report, facts)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)
