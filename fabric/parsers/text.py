"""Helpers shared by the text readers: shell-echo removal, fields, numbers, missing data."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fabric.errors import ParseError

# A prompt with user@host:path, [user@host dir], or ~ before $ or #: always an echo, never output.
_PROMPT = re.compile(r"^(?:[\w.-]+@[\w.-]+:\S*|\[[\w.-]+@[^\]]*\]|~)[$#](?:\s.*)?$")
_SUDO_PROMPT = re.compile(r"^\[sudo\] .*$")


def blank_shell_echo(raw: str, commands: Sequence[str]) -> str:
    """Blank lines that are a shell prompt or the echoed command, keeping line numbers.

    Copy-pasted and captured outputs start with ``user@host:~$ cmd``, ``$ cmd`` or ``# cmd``.
    A bare ``#``/``$`` line counts only when the kind's own command follows, because ``#``
    starts real output lines of nccl-tests and RouterOS.
    """
    names = "|".join(re.escape(c) for c in commands)
    bare = re.compile(rf"^[$#]\s*(?:sudo\s+)?(?:\S*/)?(?:{names})(?:\s.*)?$|^\$\s*$")
    echo = re.compile(rf"^(?:sudo\s+)?(?:{names})(?:\s.*)?$")
    out = []
    for line in raw.splitlines():
        if _PROMPT.match(line) or _SUDO_PROMPT.match(line) or bare.match(line) or echo.match(line):
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def nothing_found(kind: str, raw: str, what: str) -> ParseError:
    """A ParseError pointing at the last line: the output ended without ``what``."""
    lines = raw.splitlines() or [""]
    return ParseError(kind, len(lines), lines[-1], f"output ended without {what}")


def text(row: Mapping[str, str | list[str]], key: str) -> str:
    """A single (non-List) TextFSM value."""
    value = row[key]
    return value if isinstance(value, str) else " ".join(value)


def texts(row: Mapping[str, str | list[str]], key: str) -> list[str]:
    """A List TextFSM value."""
    value = row[key]
    return [value] if isinstance(value, str) else list(value)


def opt(row: Mapping[str, str | list[str]], key: str) -> str | None:
    """A single TextFSM value, None when the template did not capture it."""
    value = text(row, key).strip()
    return value or None


def opt_int(row: Mapping[str, str | list[str]], key: str) -> int | None:
    """A TextFSM value as int, None when absent."""
    value = opt(row, key)
    return None if value is None else int(value)


def find_line(raw: str, needle: str) -> tuple[int, str]:
    """1-based number and text of the first line containing ``needle`` (else line 1)."""
    lines = raw.splitlines() or [""]
    for number, line in enumerate(lines, start=1):
        if needle in line:
            return number, line
    return 1, lines[0]
