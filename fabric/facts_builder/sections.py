"""The sections of one Spark's facts batch and how they are read: `Section` (name, exit
status, output), `SectionRule` (which parser, which tool, which exit codes still count) and
`SectionReader`, which records missing tools and notes as it reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from fabric.errors import ParseError
from fabric.parsers import parse
from fabric.parsers.records import Record

R = TypeVar("R", bound=Record)
_NOT_FOUND = 127
#: Exit code of a per-twin command whose netdev does not exist (one note, not three errors).
ABSENT_RC = 100


@dataclass(frozen=True)
class Section:
    """What one command of the batch printed (stdout and stderr together) and its exit code."""

    name: str
    output: str
    rc: int


class SectionRule(Protocol):
    """How a section is read: `kind` is a `fabric.parsers` kind (None: raw text), `tool` what
    lands in `missing` on exit 127, `netdev` the twin of a per-twin command, `ok_rc` the exit
    codes whose output is still parsed, `empty_ok` whether empty output means "nothing"."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def tool(self) -> str: ...
    @property
    def netdev(self) -> str | None: ...
    @property
    def ok_rc(self) -> tuple[int, ...]: ...
    @property
    def empty_ok(self) -> bool: ...


@dataclass
class SectionReader:
    """Reads sections by command name, recording missing tools and notes as it goes."""

    sections: dict[str, Section]
    commands: dict[str, SectionRule]
    missing: dict[str, None] = field(default_factory=dict)  # ordered set
    notes: dict[str, None] = field(default_factory=dict)
    spare: frozenset[str] = frozenset()  # twins the intent does not use: absence is no news

    def asked(self, *names: str) -> bool:
        """Whether any of the commands `names` was in the batch."""
        return any(name in self.commands for name in names)

    def _usable(self, name: str) -> Section | None:
        cmd = self.commands.get(name)
        if cmd is None:  # not asked for in this batch
            return None
        sec = self.sections.get(name)
        if sec is None:
            self.notes[f"{name}: not in the transcript"] = None
            return None
        if sec.rc == _NOT_FOUND:
            self.missing[cmd.tool] = None
            return None
        if sec.rc == ABSENT_RC and cmd.netdev is not None:
            if cmd.netdev not in self.spare:
                self.notes[f"{cmd.netdev}: no such netdev on the host"] = None
            return None
        if sec.rc not in cmd.ok_rc:
            first = next((ln.strip() for ln in sec.output.splitlines() if ln.strip()), "")
            self.notes[f"{name}: exit {sec.rc}" + (f": {first[:160]}" if first else "")] = None
            return None
        if not sec.output.strip() and not cmd.empty_ok:
            self.notes[f"{name}: empty output"] = None
            return None
        return sec

    def text(self, name: str) -> str | None:
        """The raw output of a text command, None when it is unusable (recorded)."""
        sec = self._usable(name)
        return None if sec is None else sec.output.strip()

    def records(self, name: str, cls: type[R]) -> list[R] | None:
        """Parsed records of type `cls`, None when unusable or unparseable (recorded)."""
        sec = self._usable(name)
        if sec is None:
            return None
        kind = self.commands[name].kind
        if kind is None:
            return None
        if not sec.output.strip():
            return []
        try:
            found = parse(kind, sec.output)
        except ParseError as exc:
            self.notes[f"{name}: unparseable output: {exc}"[:300]] = None
            return None
        return [r for r in found if isinstance(r, cls)]
