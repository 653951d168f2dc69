"""What every menu shares: the request, the reply, value parsers, item lookup and print."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ..device import Device
from ..errors import (
    CATEGORY_ARGUMENT,
    Trap,
    ambiguous,
    no_match,
    no_such_item,
    out_of_range,
    unknown_parameter,
)
from ..query import compile_query

Row = dict[str, str]
T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """One API sentence, split: ``args`` are ``=k=v`` words (``.proplist`` taken out)."""

    path: str
    command: str
    args: Mapping[str, str] = field(default_factory=dict)
    queries: Sequence[str] = ()
    proplist: Sequence[str] | None = None


@dataclass
class Reply:
    rows: list[Row] = field(default_factory=list)
    ret: str | None = None
    is_print: bool = False
    #: a print's items in the order printed (their ``.id``, "" for a row without one), even
    #: where ``.proplist`` left ``.id`` out: what position numbers refer to afterwards
    ids: list[str] | None = None


Handler = Callable[[Device, Request], Reply]


@dataclass(frozen=True)
class Menu:
    path: str
    commands: Mapping[str, Handler]
    #: the RouterOS version (major, minor) that brought this menu; older ones lack it
    since: tuple[int, ...] = ()


def yes(value: bool) -> str:
    return "true" if value else "false"


def parse_bool(prop: str, text: str) -> bool:
    low = text.lower()
    if low in ("yes", "true"):
        return True
    if low in ("no", "false"):
        return False
    raise no_match(prop)


def parse_int(prop: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise Trap(f"invalid value for argument {prop}", CATEGORY_ARGUMENT) from None
    if not low <= value <= high:
        raise out_of_range(prop, low, high)
    return value


def parse_choice(prop: str, text: str, choices: Iterable[str]) -> str:
    """Exact match, else a unique prefix (RouterOS completes abbreviations)."""
    options = list(choices)
    if text in options:
        return text
    hits = [c for c in options if c.startswith(text)] if text else []
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ambiguous(prop)
    raise no_match(prop)


def parse_list(prop: str, text: str, choices: Iterable[str]) -> list[str]:
    options = list(choices)
    return [parse_choice(prop, part, options) for part in text.split(",") if part]


def check_args(req: Request, allowed: Iterable[str]) -> None:
    known = set(allowed)
    for key in req.args:
        if key not in known:
            raise unknown_parameter()


def target_refs(req: Request) -> list[str]:
    """The items a command acts on: ``=.id=`` or ``=numbers=`` (comma-separated)."""
    ref = req.args.get(".id", req.args.get("numbers"))
    if ref is None:
        raise Trap("missing =.id=")
    return [part for part in ref.split(",") if part]


def pick(items: Sequence[T], refs: Sequence[str], key: Callable[[T], tuple[str, str]]) -> list[T]:
    """Items by ``*N`` id or by name; any miss is ``no such item``."""
    out: list[T] = []
    for ref in refs:
        found = None
        for item in items:
            item_id, name = key(item)
            if (ref.startswith("*") and ref.upper() == item_id.upper()) or ref == name:
                found = item
                break
        if found is None:
            raise no_such_item()
        if found not in out:
            out.append(found)
    return out


def print_reply(rows: list[Row], req: Request) -> Reply:
    """Filter by query words, cut to ``.proplist``, honour ``count-only``."""
    check_args(
        req,
        (
            "detail",
            "stats",
            "without-paging",
            "count-only",
            "terse",
            "brief",
            "follow",
            "follow-only",
            "interval",
            "where",
            "as-value",
        ),
    )
    match = compile_query(req.queries)
    chosen = [row for row in rows if match(row)]
    if "count-only" in req.args:
        return Reply(ret=str(len(chosen)))
    ids = [row.get(".id", "") for row in chosen]
    return Reply(rows=proplist(chosen, req), is_print=True, ids=ids)


def proplist(rows: list[Row], req: Request) -> list[Row]:
    """Rows cut to ``=.proplist=`` (in its order), or as they are without one."""
    if req.proplist is None:
        return rows
    wanted = list(req.proplist)
    return [{k: row[k] for k in wanted if k in row} for row in rows]


Setter = Callable[[Device, list[str], dict[str, str]], None]


def toggle(setter: Setter, disabled: bool) -> Handler:
    """``enable`` / ``disable`` commands: ``set disabled=`` on the named items."""

    def handler(dev: Device, req: Request) -> Reply:
        check_args(req, (".id", "numbers"))
        setter(dev, target_refs(req), {"disabled": yes(disabled)})
        return Reply()

    return handler
