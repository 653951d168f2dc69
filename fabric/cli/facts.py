"""`fabric facts`: collect what every Spark and the switch report; JSON to a file or stdout."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.common import InventoryOpt, LabOpt, TopologyOpt, resolve_target
from fabric.errors import RunIncomplete

if TYPE_CHECKING:
    from rich.table import Table

    from fabric.facts import Facts

JsonOpt = typer.Option(None, "--json", help="Write the facts as JSON to FILE (default: stdout).")
HostsOpt = typer.Option(None, "--hosts", help="Only these hosts, comma-separated.")


def summary_table(facts: Facts) -> Table:
    """One row per host: what answered and a few headline facts."""
    from rich.table import Table

    table = Table(title=f"facts: {facts.topology} ({facts.collected})")
    for col in ("host", "state", "name", "fabric up", "neighbors", "missing / notes"):
        table.add_column(col)
    for name, s in sorted(facts.sparks.items()):
        up = sum(1 for e in s.ethtool if s.netdevs.get(e) and s.netdevs[e].carrier)
        extra = ", ".join(s.missing) + (f" [dim](+{len(s.notes)} notes)[/]" if s.notes else "")
        table.add_row(name, "[green]ok", s.hostname, f"{up}/{len(s.ethtool)}",
                      str(len(s.neighbors)), extra)
    if facts.switch is not None:
        sw = facts.switch
        running = sum(1 for lane in sw.lanes.values() if lane.running)
        table.add_row(sw.host, "[green]ok", f"{sw.identity} {sw.version}",
                      f"{running}/{len(sw.lanes)} lanes", str(len(sw.neighbors)),
                      "" if sw.lldp_enabled else "LLDP off")
    for name, why in sorted(facts.errors.items()):
        table.add_row(name, "[red]unreachable", "", "", "", why)
    return table


def facts_cmd(lab: str | None = LabOpt, inventory: Path | None = InventoryOpt,
              topology: str | None = TopologyOpt, json_out: str | None = JsonOpt,
              hosts: str | None = HostsOpt) -> None:
    """Collect facts from every host (one SSH session per Spark, the API for the switch).

    Exit 0 when every host answered, 3 naming the unreachable hosts and why.
    """
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    from fabric.cli import err_console
    from fabric.collect.gather import collect_facts
    from fabric.facts import facts_to_json
    from fabric.report.progress import RunProgress

    target = resolve_target(lab, inventory, topology)
    wanted = [h.strip() for h in hosts.split(",") if h.strip()] if hosts else None
    t0 = time.monotonic()
    columns = (SpinnerColumn(), TextColumn("{task.description:<10}"),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn())
    # drawn live on a terminal; elsewhere once, at the end (as `fabric validate`'s)
    with RunProgress(*columns, console=err_console, transient=False,
                     auto_refresh=err_console.is_terminal) as progress:
        facts = collect_facts(target, wanted, progress)
    err_console.print(summary_table(facts))
    err_console.print(f"collected in {time.monotonic() - t0:.1f}s")
    if json_out and json_out != "-":
        Path(json_out).write_text(facts_to_json(facts))
    else:  # machine-readable output goes to the named file or to stdout (the contract)
        typer.echo(facts_to_json(facts), nl=False)
    if facts.errors:
        why = "; ".join(f"{h}: {r}" for h, r in sorted(facts.errors.items()))
        raise RunIncomplete(f"{len(facts.errors)} host(s) unreachable: {why}")


def register(app: typer.Typer) -> None:
    app.command("facts")(facts_cmd)
