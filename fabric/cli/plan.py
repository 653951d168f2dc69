"""`fabric plan FROM TO`, `fabric plan metrics|synth`, `fabric whatif`: planning offline."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from fabric.cli.common import LabOpt, dump_json, write_output
from fabric.errors import InputError


class _DefaultToMigrate(TyperGroup):
    """`fabric plan FROM TO` runs the hidden `migrate` command; named subcommands still work."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["migrate", *args]
        return super().parse_args(ctx, args)


plan = typer.Typer(cls=_DefaultToMigrate, no_args_is_help=True,
                   help="`fabric plan FROM TO [--format md|json] [-o FILE] [--draw F.svg]`: "
                   "a gated migration runbook. Also: `plan metrics TOPOLOGY`, `plan synth`.")

InventoryOpt = typer.Option(None, "--inventory", "-i", help="Inventory directory.")


class PlanFormat(StrEnum):
    md = "md"
    json = "json"


def _load(topology: str | None, inventory: Path | None, lab: str | None = None) -> Any:
    from fabric.cli.common import intent_for
    from fabric.plan.capacity import check_topology_file

    if lab is None and topology is not None:
        check_topology_file(topology, inventory)
    return intent_for(topology, inventory, lab)


@plan.command("migrate", hidden=True)
def migrate(source: str = typer.Argument(..., metavar="FROM", help="Topology today."),
            target: str = typer.Argument(..., metavar="TO", help="Topology wanted."),
            fmt: PlanFormat = typer.Option(PlanFormat.md, "--format", "-f"),
            output: Path | None = typer.Option(None, "-o", "--output", help="Write to a file."),
            draw: Path | None = typer.Option(None, "--draw",
                                             help="Before/after drawing (.svg or .png)."),
            inventory: Path | None = InventoryOpt) -> None:
    """Ordered, gated steps from FROM to TO: Markdown runbook or JSON."""
    from fabric.cli import err_console
    from fabric.plan.migrate import plan_migration
    from fabric.plan.runbook import to_json, to_markdown

    src, dst = _load(source, inventory), _load(target, inventory)
    result = plan_migration(src, dst)
    write_output(to_markdown(result) if fmt is PlanFormat.md else to_json(result), output)
    if draw is not None:
        from fabric.plan.drawing import before_after

        suffix = draw.suffix.lstrip(".")
        if suffix not in ("svg", "png"):
            raise InputError("--draw needs a .svg or .png file name")
        draw.write_bytes(before_after(src, dst, suffix))
        err_console.print(f"wrote {draw}")
    err_console.print(f"{src.name} -> {dst.name}: {len(result.steps)} steps, about "
                      f"{result.total_min:g} min, at most {result.max_down} node(s) down at once")


@plan.command("metrics")
def metrics(topology: str | None = typer.Argument(None, help="Topology name or file "
                                                 "(omit with --lab)."),
            size: str = typer.Option("256M", "--size", help="All-reduce message size (bytes; "
                                     "K/M/G suffixes are powers of 2)."),
            output: Path | None = typer.Option(None, "-o", "--output"),
            inventory: Path | None = InventoryOpt, lab: str | None = LabOpt) -> None:
    """Hop counts, bisection bandwidth, ports used, and an alpha-beta all-reduce estimate."""
    from fabric.plan.graph import from_intent
    from fabric.plan.metrics import analyse, parse_size

    intent = _load(topology, inventory, lab)
    write_output(dump_json(analyse(from_intent(intent), parse_size(size)).to_dict()), output)


@plan.command("synth")
def synth(nodes: int = typer.Option(512, "--nodes", help="Sparks in the fabric."),
          oversub: float = typer.Option(1.0, "--oversub", help="Max leaf oversubscription "
                                        "(host bandwidth / uplink bandwidth)."),
          size: str = typer.Option("256M", "--size"),
          output: Path | None = typer.Option(None, "-o", "--output")) -> None:
    """Generate a CRS804 leaf-spine fabric in memory, plan its bill of materials, analyse it."""
    from fabric.plan.metrics import parse_size
    from fabric.plan.synth import plan_and_analyse

    write_output(dump_json(plan_and_analyse(nodes, oversub, parse_size(size))), output)


def whatif(topology: str | None = typer.Argument(None, help="Topology name or file "
                                                "(omit with --lab)."),
           fail: str | None = typer.Option(None, "--fail", help="node | cable (link id or "
                                           "host:port) | switch | switch:port | UPS group"),
           every: bool = typer.Option(False, "--all", help="Fail each element in turn; list "
                                      "the single points of failure."),
           tp: int = typer.Option(4, "--tp", help="Wanted tensor-parallel group size."),
           fmt: PlanFormat = typer.Option(PlanFormat.md, "--format", "-f"),
           output: Path | None = typer.Option(None, "-o", "--output"),
           inventory: Path | None = InventoryOpt, lab: str | None = LabOpt) -> None:
    """What still works when TARGET fails: connectivity, TP groups, DP capacity, bisection."""
    from fabric.plan.graph import from_intent
    from fabric.plan.whatif import fail_target, render_md, spof_md, spofs

    if (fail is None) == (not every):
        raise InputError("give exactly one of --fail TARGET or --all")
    intent = _load(topology, inventory, lab)
    fab = from_intent(intent)
    if fail is not None:
        result = fail_target(fab, intent, fail, tp)
        text = dump_json(result.to_dict()) if fmt is PlanFormat.json else render_md(result)
    else:
        found = spofs(fab, intent, tp)
        text = (dump_json([r.to_dict() for r in found]) if fmt is PlanFormat.json
                else spof_md(intent.name, found, tp))
    write_output(text, output)


def register(app: typer.Typer) -> None:
    app.add_typer(plan, name="plan")
    app.command("whatif")(whatif)
