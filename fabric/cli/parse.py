"""`fabric parse KIND FILE`: print a tool output's parsed records as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from fabric.errors import InputError, InputProblem, ParseError


def _read(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(InputProblem(file=file, line=None, field="FILE",
                                      message=exc.strerror or str(exc))) from None


def register(app: typer.Typer) -> None:
    """Add `fabric parse` to the CLI."""

    @app.command("parse")
    def parse_command(
        kind: str = typer.Argument(..., help="Parser kind, e.g. show_gids, ib_write_bw, iperf3."),
        file: str = typer.Argument(..., help="Tool output to parse; '-' reads stdin."),
    ) -> None:
        """Print parsed records as JSON (one object per record, in a list) on stdout."""
        from fabric.parsers import KINDS, parse, record_to_dict

        if kind not in KINDS:
            raise InputError(InputProblem(
                file=file, line=None, field="KIND",
                message=f"unknown parser kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}",
            ))
        raw = _read(file)
        try:
            records = parse(kind, raw)
        except ParseError as err:
            name = "<stdin>" if file == "-" else file
            raise InputError(InputProblem(
                file=name, line=err.line_no, field=kind,
                message=f"{err.reason}: {err.line!r}",
            )) from None
        typer.echo(json.dumps([record_to_dict(r) for r in records], indent=2))
