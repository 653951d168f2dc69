"""The console language's words: a line split into commands and tokens (quotes, ``[...]``),
and the conditions of ``find`` and ``print where`` as row predicates (see ``cli``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .menus.base import Row


class CliError(Exception):
    """A line that does not parse; nothing of it runs."""


# --- lexing ------------------------------------------------------------------------------------


def _scan(text: str, stop: Callable[[str, int], bool]) -> list[str]:
    """Split ``text`` into pieces at the characters ``stop`` accepts outside quotes/brackets;
    quotes are removed (escapes honoured), ``[...]`` is kept whole."""
    pieces: list[str] = []
    current: list[str] = []
    started = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            started = True
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\" and i + 1 < len(text):
                    i += 1
                current.append(text[i])
                i += 1
            if i >= len(text):
                raise CliError(f"unterminated quote (line 1 column {len(text) + 1})")
            i += 1
            continue
        if ch == "[":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "[":
                    depth += 1
                elif text[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
                elif text[j] == '"':
                    j = text.find('"', j + 1)
                    if j < 0:
                        break
                j += 1
            if j < 0 or j >= len(text):
                raise CliError(f"missing ] (line 1 column {len(text) + 1})")
            current.append(text[i : j + 1])
            started = True
            i = j + 1
            continue
        if stop(ch, i):
            if started or current:
                pieces.append("".join(current))
            current, started = [], False
            i += 1
            continue
        current.append(ch)
        started = True
        i += 1
    if started or current:
        pieces.append("".join(current))
    return pieces


def split_commands(line: str) -> list[str]:
    """``a; b`` -> ``["a", "b"]`` (a ``;`` inside quotes or brackets does not split)."""
    raw: list[str] = []
    start = 0
    depth = 0
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth -= 1
        elif not quoted and depth == 0 and ch == ";":
            raw.append(line[start:i])
            start = i + 1
    raw.append(line[start:])
    return [part.strip() for part in raw if part.strip()]


def tokens(command: str) -> list[str]:
    return _scan(command, lambda ch, _i: ch.isspace())


# --- conditions (find, print where) ------------------------------------------------------------

Predicate = Callable[[Row], bool]
_CONDITION = re.compile(r"^(!?)([A-Za-z.][\w.-]*)(?:(!=|=|~|<|>)(.*))?$", re.S)


def _norm(value: str) -> str:
    return {"yes": "true", "no": "false"}.get(value, value)


def _condition(text: str) -> Predicate:
    m = _CONDITION.match(text)
    if m is None:
        raise CliError(f"syntax error in condition {text!r}")
    negate, key, op, value = m.group(1), m.group(2), m.group(3), m.group(4)
    if op is None:
        def pred(row: Row) -> bool:
            return row.get(key) == "true"
    elif op in ("=", "!="):
        wanted = _norm(value)

        def pred(row: Row) -> bool:
            return (row.get(key) == wanted) == (op == "=")
    elif op == "~":
        pattern = re.compile(value)

        def pred(row: Row) -> bool:
            return key in row and pattern.search(row[key]) is not None
    else:
        def pred(row: Row) -> bool:
            if key not in row:
                return False
            a, b = row[key], value
            try:
                less = float(a) < float(b) if op == "<" else float(a) > float(b)
            except ValueError:
                less = a < b if op == "<" else a > b
            return less
    return (lambda row: not pred(row)) if negate else pred


def conditions(words: list[str]) -> Predicate:
    """Conditions ANDed (``and`` may be written; ``or`` is not supported)."""
    preds = [_condition(w) for w in words if w not in ("and", "where")]
    if any(w == "or" for w in words):
        raise CliError("'or' in conditions is not supported by the lab emulator")
    return lambda row: all(p(row) for p in preds)


def find(expression: str) -> Predicate:
    """``[ find default-name=x ]`` / ``[find where running]`` as a row predicate."""
    inner = tokens(expression.strip()[1:-1])
    if not inner or inner[0] != "find":
        raise CliError(f"only [ find ... ] is supported here, got {expression}")
    return conditions(inner[1:])
