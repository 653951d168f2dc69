"""Frozen dataclasses to and from the JSON of `faults.json`, checked field by field.

`encode` is `dataclasses.asdict` (tuples come out as JSON lists); `decode` rebuilds a
dataclass from what `json.loads` gave, following its field annotations (str, int, bool,
None, Literal, unions, tuples and nested dataclasses), and says where a value is wrong.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from fabric.lab.ns import LabError

T = TypeVar("T")


class RecordError(LabError):
    """A record in `faults.json` that this fabric cannot read."""


def encode(record: Any) -> dict[str, Any]:
    """A dataclass instance as plain JSON data."""
    data: dict[str, Any] = dataclasses.asdict(record)
    return data


def decode(cls: type[T], data: Any, where: str = "record") -> T:
    """An instance of dataclass `cls` from JSON `data`; RecordError naming the bad field."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected an object, got {_show(data)}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RecordError(f"{where}: unknown field(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name in data:
            values[name] = _value(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise RecordError(f"{where}: missing field {name}")
    return cls(**values)


def _value(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return decode(tp, value, where)
    if origin in (Union, types.UnionType):
        return _union(get_args(tp), value, where)
    if origin is Literal:
        if value not in get_args(tp):
            raise RecordError(f"{where}: expected one of {', '.join(map(repr, get_args(tp)))}, "
                              f"got {_show(value)}")
        return value
    if origin is tuple:
        return _tuple(get_args(tp), value, where)
    if tp is type(None):
        if value is not None:
            raise RecordError(f"{where}: expected null, got {_show(value)}")
        return None
    if tp in (str, int, bool) and isinstance(value, tp) and (tp is bool or
                                                             not isinstance(value, bool)):
        return value
    raise RecordError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {_show(value)}")


def _union(args: tuple[Any, ...], value: Any, where: str) -> Any:
    problems = []
    for arg in args:
        try:
            return _value(arg, value, where)
        except RecordError as exc:
            problems.append(str(exc))
    raise RecordError(problems[-1] if len(problems) == 1 else
                      f"{where}: none of the forms fit ({'; '.join(problems)})")


def _tuple(args: tuple[Any, ...], value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise RecordError(f"{where}: expected a list, got {_show(value)}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if len(value) != len(args):
        raise RecordError(f"{where}: expected {len(args)} items, got {len(value)}")
    return tuple(_value(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value,
                                                                              strict=True)))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

