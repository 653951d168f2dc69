"""`fabric gate [REPORT.json]`: exit 0 only on a passed, fresh report for the current intent,
made on the fabric as it is now (its fingerprint, re-read live)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.errors import InputError
from fabric.gate import (
    DEFAULT_MAX_AGE_S,
    GateVerdict,
    check_live,
    default_report_path,
    evaluate,
    load_report,
)
from fabric.report.model import ReportError

if TYPE_CHECKING:
    from fabric.target import Target

ReportArg = typer.Argument(None, help="Report JSON (default: the last `fabric validate` run's; "
                           "see fabric.gate.default_report_path).")
MaxAgeOpt = typer.Option(DEFAULT_MAX_AGE_S, "--max-age", help="Oldest acceptable report, s.")
LabOpt = typer.Option(None, "--lab", help="Gate lab NAME (its topology and report).")
InventoryOpt = typer.Option(None, "--inventory", "-i", help="Nornir inventory directory.")
TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology name or file.")
NoLiveOpt = typer.Option(False, "--no-live", help="Judge the report file alone, without "
                         "reading the fabric (CI with an archived report, a host that cannot "
                         "reach the fabric). A fabric changed since the report (a rebuilt lab, "
                         "an MTU, a cable) is then NOT noticed.")


def _current_hash(report: Path, lab: str | None, inventory: Path | None,
                  topology: str | None) -> str:
    """The intent hash to compare with: the named target's, else the report's lab or
    topology as it stands now (so an edited topology file shuts the gate)."""
    if lab is None and topology is None:
        lab = load_report(report).lab  # a lab's report is judged against that lab
    from fabric.intent.build import load_intent

    if lab is not None:
        from fabric.lab.lifecycle.registry import load_lab

        info = load_lab(lab)
        return load_intent(info.topology_path, info.inventory_dir).intent_hash
    if topology is not None:
        return load_intent(topology, inventory).intent_hash
    return load_intent(load_report(report).topology).intent_hash


def _live_target(verdict: GateVerdict, lab: str | None, inventory: Path | None,
                 topology: str | None) -> Target:
    """Where to read the live fingerprint: the named target, else the report's lab, else its
    topology with the default inventory."""
    from fabric.cli.common import resolve_target

    report = verdict.report
    assert report is not None
    if lab is None and topology is None:
        if report.lab is not None:
            return resolve_target(report.lab, None, None)
        return resolve_target(None, None, report.topology)
    return resolve_target(lab, inventory, topology)


def gate(report: Path | None = ReportArg, max_age: float = MaxAgeOpt,
         lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
         topology: str | None = TopologyOpt, no_live: bool = NoLiveOpt) -> None:
    """Exit 0 only if the report passed, is fresh, was made for the current intent and the
    fabric read now still has the fingerprint the report stored (link state, speed, MTU,
    addresses, LLDP neighbours and GIDs per twin; status, rate and MTU per switch lane).

    Exit 1 when shut (the reason names each change), 3 when a host cannot be read now.
    """
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
    if verdict.ok and not no_live:
        verdict = check_live(verdict, _live_target(verdict, lab, inventory, topology))
    elif verdict.ok:
        err_console.print("gate: --no-live: the fabric itself was not read", style="yellow")
    word, style = ("OPEN", "bold green") if verdict.ok else ("SHUT", "bold red")
    err_console.print(f"gate: {word}: {verdict.reason}", style=style, markup=False)
    raise typer.Exit(verdict.exit_code)


def register(app: typer.Typer) -> None:
    app.command("gate")(gate)
