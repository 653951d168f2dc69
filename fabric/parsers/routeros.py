"""RouterOS ``/export`` reader (terse or not): one RouterosCommand per command.

``\\`` continuations are joined onto the first line (line numbers stay those of the first
line), ``#`` lines are comments. ``[ find k=v ]`` selectors become ``find``; a bare positional
word (``/ip service set telnet ...``) is kept in ``find`` as ``("item", word)``.
"""

from __future__ import annotations

import re

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import Record, RouterosCommand
from fabric.parsers.text import opt, text
from fabric.parsers.textfsm_runner import LINE_KEY, run_template

_TOKEN = re.compile(
    r'\s*(?:(?P<key>[\w.-]+)=(?P<value>"(?:[^"\\]|\\.)*"|[^\s"\[\]]*)|(?P<word>[^\s=\[\]"]+))'
)
_FIND = re.compile(r"^\s*\[\s*find(?P<body>(?:[^\]\"]|\"(?:[^\"\\]|\\.)*\")*)\]")


def join_continuations(raw: str) -> str:
    """Join ``\\``-continued lines onto their first line; continued lines become blank."""
    out: list[str] = []
    pending: int | None = None
    for line in raw.splitlines():
        if pending is not None:
            out[pending] = out[pending][:-1] + line.lstrip()
            out.append("")
            if not out[pending].endswith("\\"):
                pending = None
            continue
        out.append(line)
        if line.endswith("\\") and not line.startswith("#"):
            pending = len(out) - 1
    return "\n".join(out)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def _pairs(kind: str, line_no: int, line: str, args: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    pos = 0
    while pos < len(args.rstrip()):
        match = _TOKEN.match(args, pos)
        if match is None or match.end() == pos:
            raise ParseError(kind, line_no, line, f"cannot read arguments at {args[pos:]!r}")
        if match["key"] is not None:
            pairs.append((match["key"], _unquote(match["value"])))
        else:
            pairs.append(("item", match["word"]))
        pos = match.end()
    return pairs


def read_routeros_export(kind: str, raw: str) -> list[Record]:
    """Commands of an export, in order, with their line numbers."""
    joined = join_continuations(raw)
    lines = raw.splitlines()
    rows = run_template(kind, joined)
    commands: list[Record] = []
    for r in rows:
        line_no = int(text(r, LINE_KEY))
        line = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        args = opt(r, "ARGS") or ""
        find: list[tuple[str, str]] = []
        selector = _FIND.match(args)
        if selector:
            find = _pairs(kind, line_no, line, selector["body"])
            args = args[selector.end():]
        elif "[" in args:
            raise ParseError(kind, line_no, line, "unsupported [ ... ] expression")
        attributes = _pairs(kind, line_no, line, args)
        find += [p for p in attributes if p[0] == "item"]
        commands.append(
            RouterosCommand(
                path=text(r, "PATH"),
                action=text(r, "ACTION"),
                find=tuple(find),
                attributes=tuple(p for p in attributes if p[0] != "item"),
                line_no=line_no,
            )
        )
    return commands


KINDS = (
    Kind("routeros_export", "mikrotik_routeros", read_routeros_export, "RouterOS /export [terse]"),
)
