"""`fabric topo check|show`: the intent, statically checked, as a table, JSON or a drawing."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.cli.common import LabOpt, TopologyArg, dump_json, intent_for, write_output
from fabric.errors import InputError

if TYPE_CHECKING:
    from rich.table import Table

    from fabric.intent.model import Intent

topo = typer.Typer(help="Topologies: static checks, tables, JSON and drawings.",
                   no_args_is_help=True)

InventoryOpt = typer.Option(None, "--inventory", "-i", help="Inventory directory.")


class ShowFormat(StrEnum):
    table = "table"
    json = "json"
    svg = "svg"
    png = "png"
    dot = "dot"


@topo.command("check")
def check(topology: str | None = TopologyArg, inventory: Path | None = InventoryOpt,
          lab: str | None = LabOpt) -> None:
    """Run every static check; exit 2 with file, line and field for each problem."""
    from fabric.cli import err_console

    intent = intent_for(topology, inventory, lab)
    err_console.print(f"[green]ok[/] {intent.name}: {len(intent.sparks)} Sparks, "
                      f"{len(intent.links)} cables, {intent.kind}, MTU {intent.mtu}, "
                      f"profile {intent.profile.name}, intent {intent.intent_hash}")


@topo.command("show")
def show(topology: str | None = TopologyArg, inventory: Path | None = InventoryOpt,
         lab: str | None = LabOpt,
         fmt: ShowFormat = typer.Option(ShowFormat.table, "--format", "-f"),
         output: Path | None = typer.Option(None, "-o", "--output", help="Write to a file.")
         ) -> None:
    """Show links with each end's twins, subnets and addresses; or JSON, SVG, PNG."""
    from fabric.cli import err_console

    intent = intent_for(topology, inventory, lab)
    if fmt is ShowFormat.table:
        table = links_table(intent)
        if output:
            from rich.console import Console
            with output.open("w") as fh:
                Console(file=fh, width=160).print(table)
        else:
            err_console.print(table)
        return
    if fmt is ShowFormat.json:
        write_output(dump_json(intent.to_dict()), output)
        return
    from fabric.draw import render

    if fmt in (ShowFormat.png,) and output is None:
        raise InputError("--format png needs -o FILE")
    data = render.draw(intent, fmt.value)
    if output is None:
        write_output(data.decode(), None)
    else:
        output.write_bytes(data)
        err_console.print(f"wrote {output}")


def links_table(intent: Intent) -> Table:
    from rich.table import Table

    table = Table(title=f"{intent.name} ({intent.kind}, MTU {intent.mtu}, profile "
                  f"{intent.profile.name})")
    for col in ("link", "speed", "twin", "subnet", "a netdev", "a address", "b netdev",
                "b address"):
        table.add_column(col)
    for link in intent.links:
        for rail in link.rails:
            table.add_row(link.id if rail.twin == 0 else "", f"{link.speed_gbps}G"
                          if rail.twin == 0 else "", "AB"[rail.twin], str(rail.subnet),
                          rail.a.netdev, str(rail.a.address or "-"), rail.b.netdev,
                          str(rail.b.address or "-"))
    return table


def register(app: typer.Typer) -> None:
    app.add_typer(topo, name="topo")
