"""A menu's properties as a table, not as ``if``/``elif`` code.

Each ``Prop`` says, for one property of a menu's items, what ``print`` shows (``show``: fixed
text, the read-only default every item has; or read from the item's view; None: not on this
row) and how ``set``/``add`` read a value (``parse``: None for a read-only property) and where
the value goes (``attr``). ``render`` prints a row in table order; ``apply`` reads arguments in
the order given, so the first bad value is the one refused, as before.

The QoS menus take their types, availability by chip family and version, defaults and
read-only-ness from fabric/intent/platforms.yaml ``routeros_properties`` (see ``qos_common``);
the interface and bridge menus' tables are here, their limits from the emulated ``Platform``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..device import Device
from ..errors import unknown_parameter
from ..platform import Platform
from ..state import State
from .base import Row, parse_bool, parse_choice, parse_int, parse_list

V = TypeVar("V")


@dataclass(frozen=True)
class Ctx:
    """What a parser may look at: the device (its platform), the state, the item changed."""

    dev: Device
    state: State
    item: Any


#: (context, property, text) -> the value to keep
Parse = Callable[[Ctx, str, str], Any]
#: what ``print`` shows: text, a block of properties spliced in (counters), or None (absent)
Shown = str | Row | None


@dataclass(frozen=True)
class Prop(Generic[V]):
    name: str
    #: fixed text (a read-only default) or read from the item's view; None: never printed
    show: str | Callable[[V], Shown] | None = None
    #: how ``set``/``add`` read the value; None: read-only (``unknown parameter``)
    parse: Parse | None = None
    #: the item's attribute: "" the name with ``-`` as ``_``; None: validated, then dropped
    attr: str | None = ""

    @property
    def read_only(self) -> bool:
        return self.parse is None

    def target(self) -> str | None:
        return self.name.replace("-", "_") if self.attr == "" else self.attr


Table = Sequence[Prop[V]]


def render(table: Table[V], view: V) -> Row:
    """The row `view` prints: each property in table order, a block spliced in its place."""
    row: Row = {}
    for prop in table:
        shown = prop.show(view) if callable(prop.show) else prop.show
        if isinstance(shown, dict):
            row.update(shown)
        elif shown is not None:
            row[prop.name] = shown
    return row


def settable(table: Table[Any]) -> tuple[str, ...]:
    return tuple(p.name for p in table if not p.read_only)


def by_name(table: Table[Any]) -> dict[str, Prop[Any]]:
    return {p.name: p for p in table}


def apply(props: Mapping[str, Prop[Any]], ctx: Ctx, args: Mapping[str, str],
          strict: bool = False) -> None:
    """Read `args` into ``ctx.item`` in the order given; an argument the table does not let
    be set is ``unknown parameter`` when `strict`, else passed over (the caller checked)."""
    for key, text in args.items():
        prop = props.get(key)
        if prop is None or prop.parse is None:
            if strict:
                raise unknown_parameter()
            continue
        value = prop.parse(ctx, key, text)
        target = prop.target()
        if target is not None:
            setattr(ctx.item, target, value)


# --- parsers --------------------------------------------------------------------------------

Bound = int | Callable[[Platform], int]
Options = Iterable[str] | Callable[[Ctx], Iterable[str]]


def _bound(bound: Bound, platform: Platform) -> int:
    return bound(platform) if callable(bound) else bound


def _options(options: Options, ctx: Ctx) -> Iterable[str]:
    return options(ctx) if callable(options) else options


def text(ctx: Ctx, prop: str, value: str) -> str:
    return value


def boolean(ctx: Ctx, prop: str, value: str) -> bool:
    return parse_bool(prop, value)


def integer(low: Bound, high: Bound) -> Parse:
    """A whole number in [low, high] (a bound may be read from the platform)."""

    def parse(ctx: Ctx, prop: str, value: str) -> int:
        p = ctx.dev.platform
        return parse_int(prop, value, _bound(low, p), _bound(high, p))

    return parse


def choice(options: Options) -> Parse:
    """One of `options` (or a unique prefix of one)."""

    def parse(ctx: Ctx, prop: str, value: str) -> str:
        return parse_choice(prop, value, _options(options, ctx))

    return parse


def choices(options: Options) -> Parse:
    """A comma-separated list of `options`."""

    def parse(ctx: Ctx, prop: str, value: str) -> list[str]:
        return parse_list(prop, value, _options(options, ctx))

    return parse


def word_or(words: Iterable[str], parse: Parse, show: Callable[[Any], str] = str) -> Parse:
    """A word of `words` as it is (``auto``), else `parse`, kept as `show` prints it."""
    kept = tuple(words)

    def either(ctx: Ctx, prop: str, value: str) -> str:
        return value if value in kept else show(parse(ctx, prop, value))

    return either
