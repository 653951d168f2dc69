"""`fabric gate [REPORT.json]`: exit 0 only on a passed, fresh report for the current intent."""

from __future__ import annotations

from pathlib import Path

import typer

from fabric.errors import InputError
from fabric.gate import DEFAULT_MAX_AGE_S, default_report_path, evaluate, load_report
from fabric.report.model import ReportError

ReportArg = typer.Argument(None, help="Report JSON (default: the last `fabric validate` run's; "
                           "see fabric.gate.default_report_path).")
MaxAgeOpt = typer.Option(DEFAULT_MAX_AGE_S, "--max-age", help="Oldest acceptable report, s.")
LabOpt = typer.Option(None, "--lab", help="Gate lab NAME (its topology and report).")
InventoryOpt = typer.Option(None, "--inventory", "-i", help="Nornir inventory directory.")
TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology name or file.")


def _current_hash(report: Path, lab: str | None, inventory: Path | None,
                  topology: str | None) -> str:
    """The intent hash to compare with: the named target's, else the report's lab or
    topology as it stands now (so an edited topology file shuts the gate)."""
    from fabric.intent.build import load_intent

    if lab is None and topology is None:
        lab = load_report(report).lab  # a lab's report is judged against that lab
    if lab is not None:
        from fabric.lab.registry import load_lab

        info = load_lab(lab)
        return load_intent(info.topology_path, info.inventory_dir).intent_hash
    if topology is not None:
        return load_intent(topology, inventory).intent_hash
    return load_intent(load_report(report).topology).intent_hash


def gate(report: Path | None = ReportArg, max_age: float = MaxAgeOpt,
         lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
         topology: str | None = TopologyOpt) -> None:
    """Exit 0 only if the report passed, is fresh and was made for the current intent."""
    from fabric.cli import err_console

    if max_age <= 0:
        raise InputError("--max-age must be a positive number of seconds")
    if lab is not None and (inventory is not None or topology is not None):
        raise InputError("--lab already names an inventory and a topology; drop -i/-t or "
                         "drop --lab")
    if inventory is not None and topology is None:
        raise InputError("-i needs -t TOPOLOGY")
    path = report or default_report_path(lab)
    try:
        current = _current_hash(path, lab, inventory, topology)
    except ReportError as exc:
        err_console.print(f"gate: SHUT: {exc}", style="bold red", markup=False)
        raise typer.Exit(1) from None
    except InputError as exc:
        if lab is None and topology is None:  # the report names a topology we cannot load
            err_console.print(f"gate: SHUT: cannot rebuild the report's intent: {exc}",
                              style="bold red", markup=False)
            raise typer.Exit(1) from None
        raise
    verdict = evaluate(path, current, max_age_s=max_age)
    word, style = ("OPEN", "bold green") if verdict.ok else ("SHUT", "bold red")
    err_console.print(f"gate: {word}: {verdict.reason}", style=style, markup=False)
    raise typer.Exit(verdict.exit_code)


def register(app: typer.Typer) -> None:
    app.command("gate")(gate)
