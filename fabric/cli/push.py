"""`fabric push`: show (dry run) or apply intent minus facts; `fabric push rollback RUN_ID`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target
from fabric.errors import InputError, RunIncomplete

if TYPE_CHECKING:
    from fabric.push.apply import PushOutcome
    from fabric.push.model import ChangeSet

#: The option defaults: `fabric.push.runner.DEFAULT_WORKERS` and `fabric.push.verify.
#: LINK_WAIT_S`, repeated so that the CLI starts without importing the push machinery
#: (tests/probes/test_cli_startup.py pins them equal).
DEFAULT_WORKERS = 4
LINK_WAIT_S = 60.0

push_app = typer.Typer(help="Configure the Sparks and the CRS804 from the intent (dry run "
                       "unless --apply).", invoke_without_command=True)

WorkersOpt = typer.Option(DEFAULT_WORKERS, "--workers", min=1, max=32,
                          help="Hosts worked on at once.")


def _hosts(value: str | None) -> list[str] | None:
    if value is None:
        return None
    hosts = [h.strip() for h in value.split(",") if h.strip()]
    if not hosts:
        raise InputError("--hosts: name at least one host (H1,H2,…)")
    return hosts


@push_app.callback()
def push(ctx: typer.Context, lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
         topology: str | None = TopologyOpt,
         apply: bool = typer.Option(False, "--apply", help="Apply the diff (default: show it)."),
         hosts: str | None = typer.Option(None, "--hosts", help="Only these hosts (H1,H2,…)."),
         workers: int = WorkersOpt,
         adopt_foreign: bool = typer.Option(
             False, "--adopt-foreign", help="Take over other netplan/NetworkManager "
             "definitions of the twins (backed up, then removed) instead of refusing."),
         link_wait: float = typer.Option(
             LINK_WAIT_S, "--link-wait", min=0, max=600,
             help="Seconds verification waits for restarted links to train.")) -> None:
    """Collect facts, show intent minus facts per host; --apply backs up, applies, verifies
    and rolls back automatically if verification fails."""
    if ctx.invoked_subcommand is not None:
        return
    from fabric.cli import err_console
    from fabric.push.apply import push as run_push

    target = resolve_target(lab, inventory, topology)
    out = run_push(target, _hosts(hosts), apply, workers,
                   lambda msg: err_console.print(f"[dim]{msg}[/]", highlight=False),
                   adopt=adopt_foreign, link_wait_s=link_wait)
    scrub = target.credentials.scrub
    show_changes(out.changeset)
    total = out.changeset.changes
    if not apply:
        err_console.print(f"dry run: {total} changes on {len(out.changeset.hosts_with_changes())} "
                          f"hosts; nothing applied (use --apply)", highlight=False)
    elif total == 0:
        err_console.print("0 changes: everything already matches the intent; nothing applied",
                          highlight=False)
    elif out.exit_code == 1:
        _report_failure(out, scrub)
    else:
        err_console.print(f"[green]applied {total} changes[/] on "
                          f"{', '.join(out.changeset.hosts_with_changes())} and verified "
                          f"(run {out.run_id}, {out.duration_s:.1f}s)", highlight=False)
    if out.run_id:
        typer.echo(f"RUN_ID {out.run_id}")
        err_console.print(f"backup: {out.run_dir}", highlight=False, markup=False)
    for host, why in out.changeset.refused.items():
        err_console.print(f"REFUSED {host} (nothing changed there): {scrub(why)}",
                          style="red", highlight=False, markup=False, soft_wrap=True)
    if out.changeset.switch is not None and out.changeset.switch.refused:
        err_console.print("nothing is changed on any host while the switch is refused: the "
                          "fabric depends on it", style="red", highlight=False, markup=False)
    if out.changeset.errors or out.changeset.refused:
        reasons = "; ".join(f"{h}: {scrub(why)}" for h, why in sorted(out.changeset.errors.items()))
        parts = [f"unreachable hosts: {reasons}"] if reasons else []
        if out.changeset.refused:
            parts.append(f"refused hosts: {', '.join(out.changeset.refused)}")
        if out.exit_code == 3:
            raise RunIncomplete(f"{'; '.join(parts)} (the others were handled)")
        err_console.print("; ".join(parts), highlight=False, markup=False)
    if out.exit_code:
        raise typer.Exit(out.exit_code)


def _report_failure(out: PushOutcome, scrub: Callable[[str], str]) -> None:
    from fabric.cli import err_console

    for host, why in sorted(out.apply_errors.items()):
        err_console.print(f"apply failed on {host}: {scrub(why)}", style="red", markup=False)
    for host, found in sorted(out.problems.items()):
        for p in found:
            err_console.print(f"verification failed on {host}: {scrub(p)}", style="red",
                              markup=False)
    if out.rollback_errors:
        for host, why in sorted(out.rollback_errors.items()):
            err_console.print(f"ROLLBACK FAILED on {host}: {scrub(why)}", style="bold red",
                              markup=False)
    else:
        err_console.print(f"rolled back: {', '.join(sorted(out.rolled_back))} restored from "
                          f"run {out.run_id}", style="yellow", markup=False)


def show_changes(changeset: ChangeSet) -> None:
    """Per host: netplan diff, commands and API sets (old -> new), warnings and notes."""
    from fabric.cli import err_console
    from fabric.devices.spark.apply_spark_config import change_text

    for host, sp in sorted(changeset.sparks.items()):
        refused = " [red](refused: not applied)[/]" if sp.refused else ""
        err_console.print(f"[bold]{host}[/]: {sp.changes} changes{refused}", highlight=False)
        if sp.changes:
            err_console.print(_indent(change_text(sp)), markup=False, highlight=False)
        for note in sp.notes:
            err_console.print(f"  note: {note}", style="dim", markup=False, highlight=False)
    if changeset.switch is not None:
        sw = changeset.switch
        err_console.print(f"[bold]{sw.host}[/] (RouterOS {sw.version}): {sw.changes} changes",
                          highlight=False)
        for call in sw.calls:
            err_console.print(f"  {call}", markup=False, highlight=False)
        for warning in sw.warnings:
            err_console.print(f"  WARNING: {warning}", style="yellow", markup=False,
                              highlight=False)
        for note in sw.notes:
            err_console.print(f"  note: {note}", style="dim", markup=False, highlight=False)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


@push_app.command("rollback")
def rollback_cmd(run_id: str = typer.Argument(..., help="The RUN_ID a push printed."),
                 lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
                 topology: str | None = TopologyOpt, workers: int = WorkersOpt) -> None:
    """Restore every host of a push run from its backup."""
    from fabric.cli import err_console
    from fabric.push.apply import rollback_run

    target = resolve_target(lab, inventory, topology)
    done, errors = rollback_run(target, run_id, workers,
                                lambda msg: err_console.print(f"[dim]{msg}[/]"))
    for host, steps in sorted(done.items()):
        err_console.print(f"{host}: restored ({len(steps)} steps)", highlight=False)
    if errors:
        reasons = "; ".join(f"{h}: {target.credentials.scrub(w)}" for h, w in errors.items())
        raise RunIncomplete(f"rollback incomplete: {reasons}")
    err_console.print(f"[green]run {run_id} rolled back[/]", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(push_app, name="push")
