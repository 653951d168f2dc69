"""Small typed access to JSON tool output; every failure is a ParseError with a line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from fabric.errors import ParseError
from fabric.parsers.text import blank_shell_echo

T = TypeVar("T")


def _keep_first(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: duplicate keys (iperf3 3.12 ``start``) keep their first value."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        result.setdefault(key, value)
    return result


def load_json(kind: str, raw: str, commands: Sequence[str]) -> Any:
    """Decode JSON output (after blanking an echoed command line)."""
    cleaned = blank_shell_echo(raw, commands)
    lines = raw.splitlines() or [""]
    if not cleaned.strip():
        raise ParseError(kind, 1, lines[0], "empty output")
    try:
        return json.loads(cleaned, object_pairs_hook=_keep_first)
    except json.JSONDecodeError as exc:
        line = lines[exc.lineno - 1] if exc.lineno <= len(lines) else ""
        raise ParseError(kind, exc.lineno, line, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise ParseError(kind, 1, lines[0], "JSON nested too deeply") from None


class JsonView:
    """Typed getters over decoded JSON; a wrong type or missing key is a ParseError."""

    def __init__(self, kind: str, raw: str) -> None:
        self.kind = kind
        self.lines = raw.splitlines() or [""]

    def fail(self, where: str, reason: str) -> ParseError:
        """A ParseError at the first line that mentions ``where`` (a key), else line 1."""
        needle = f'"{where.rsplit(".", 1)[-1]}"'
        for number, line in enumerate(self.lines, start=1):
            if needle in line:
                return ParseError(self.kind, number, line, f"{where}: {reason}")
        return ParseError(self.kind, 1, self.lines[0], f"{where}: {reason}")

    def get(self, obj: Any, key: str, typ: type[T], where: str = "") -> T:
        """``obj[key]`` which must be a ``typ``."""
        path = f"{where}.{key}" if where else key
        if not isinstance(obj, dict) or key not in obj:
            raise self.fail(path, "missing")
        return self.check(obj[key], typ, path)

    def opt(self, obj: Any, key: str, typ: type[T], where: str = "") -> T | None:
        """``obj[key]`` if present (must then be a ``typ``), else None."""
        if not isinstance(obj, dict) or obj.get(key) is None:
            return None
        return self.get(obj, key, typ, where)

    def check(self, value: Any, typ: type[T], where: str) -> T:
        """``value`` must be a ``typ`` (bool is not accepted as int or float)."""
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, typ) or (typ in (int, float) and isinstance(value, bool)):
            raise self.fail(where, f"expected {typ.__name__}, got {type(value).__name__}")
        return value
