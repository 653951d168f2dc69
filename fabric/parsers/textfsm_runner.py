"""Run the TextFSM templates in ``templates/`` (ntc-templates layout) with line-numbered errors."""

from __future__ import annotations

import csv
import io
import threading
from functools import cache
from pathlib import Path

import textfsm

from fabric.errors import ParseError

TEMPLATE_DIR = Path(__file__).parent / "templates"
INDEX_FILE = TEMPLATE_DIR / "index"

#: Key added to every row: the 1-based input line at which the record was completed.
LINE_KEY = "_LINE"

#: One parsed TextFSM record: value name -> text (or list of texts for ``List`` values).
Row = dict[str, "str | list[str]"]


@cache
def template_index() -> dict[str, str]:
    """Map each kind (the index's Command column) to its template file name."""
    lines = [
        line
        for line in INDEX_FILE.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    reader = csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)
    header = next(reader)
    if header != ["Template", "Hostname", "Platform", "Command"]:
        raise ValueError(f"unexpected index header {header!r}")
    return {row[3]: row[0] for row in reader}


class _CountingFSM(textfsm.TextFSM):  # type: ignore[misc]
    """TextFSM that remembers how many input lines it has consumed."""

    line_no = 0
    record_lines: list[int]

    def _CheckLine(self, line: str) -> None:
        self.line_no += 1
        super()._CheckLine(line)

    def _AppendRecord(self) -> None:
        before = len(self._result)
        super()._AppendRecord()
        if len(self._result) > before:
            self.record_lines.append(self.line_no)


_FSMS = threading.local()


def _fsm(name: str) -> _CountingFSM:
    """The template's FSM, reset for a new input: built once per thread (a validation parses
    hundreds of outputs with the same few templates; an FSM is not thread-safe)."""
    cached: dict[str, _CountingFSM] = _FSMS.__dict__.setdefault("by_name", {})
    fsm = cached.get(name)
    if fsm is None:
        with (TEMPLATE_DIR / name).open() as handle:
            fsm = cached[name] = _CountingFSM(handle)
    else:
        fsm.Reset()
    fsm.line_no = 0
    fsm.record_lines = []
    return fsm


def run_template(kind: str, text: str) -> list[Row]:
    """Parse ``text`` with the kind's template; an ``Error`` rule becomes a ParseError."""
    fsm = _fsm(template_index()[kind])
    lines = text.splitlines()
    try:
        rows = fsm.ParseText(text)
    except textfsm.TextFSMError as exc:
        line_no = fsm.line_no
        line = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        raise ParseError(kind, line_no, line, "unexpected line") from exc
    header: list[str] = fsm.header
    return [
        {**dict(zip(header, row, strict=True)), LINE_KEY: str(line_no)}
        for row, line_no in zip(rows, fsm.record_lines, strict=True)
    ]


def template_states(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Each state's rules of a template as (regex, line action), for the meta-tests."""
    with path.open() as handle:
        fsm = textfsm.TextFSM(handle)
    return {
        name: [(rule.match, rule.line_op) for rule in rules] for name, rules in fsm.states.items()
    }
