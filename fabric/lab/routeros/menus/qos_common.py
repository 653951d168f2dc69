"""What the QoS menus share: value parsers, and the property table that decides which
properties a row has and which arguments a command takes, by chip family and RouterOS version
(fabric/intent/platforms.yaml ``routeros_properties``, read by push too)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from fabric.intent.platforms import MenuProperty, routeros_properties, version_tuple

from ..device import Device
from ..errors import CATEGORY_ARGUMENT, Trap, no_match
from ..state import State
from .base import Reply, Request, Row, check_args, parse_int, print_reply, yes
from .props import Ctx, Parse, Prop, apply, boolean, choice, integer, text, word_or

SWITCH, QOS = "/interface/ethernet/switch", "/interface/ethernet/switch/qos"
TRUST = ("ignore", "trust", "keep")
SCHEDULES = ("strict-priority", "low-priority-group", "high-priority-group")
WRED_THRESHOLDS = ("low", "medium", "high")
QUEUES = tuple(str(n) for n in range(8))
RATE_KEYS = tuple(f"egress-rate-queue{n}" for n in QUEUES)
IDS = (".id", "numbers")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)([kKMG]?)(?:bps)?$")
_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}

Handler = Callable[[Device, Request], Reply]


def since(state: State, version: tuple[int, ...]) -> bool:
    return version_tuple(state.version)[:2] >= version


def shown(state: State, menu: str) -> tuple[str, ...]:
    """The properties `menu`'s rows have on this chip family and RouterOS version."""
    return routeros_properties().shown(menu, state.chip_family, state.version)


def has(state: State, menu: str, prop: str) -> bool:
    return prop in shown(state, menu)


def table_row(state: State, menu: str, row: Row) -> Row:
    """`row` cut to the properties the table gives this chip and version (order kept)."""
    keep = set(shown(state, menu))
    return {k: v for k, v in row.items() if k == ".id" or k in keep}


def check(req: Request, state: State, menu: str, args: Iterable[str] | None = None,
          ids: bool = True) -> None:
    """``unknown parameter`` for an argument this command does not take (`args`; None: every
    property the table lets be set), or that this chip and version do not have (RouterOS
    refuses both alike)."""
    keep = set(shown(state, menu))
    takes = routeros_properties().settable(menu, state.chip_family, state.version)
    check_args(req, [*(IDS if ids else ()), *(a for a in (takes if args is None else args)
                                              if a in keep)])


#: a `ref` property's menu -> the names its items have
REFS: dict[str, Callable[[State], list[str]]] = {
    f"{QOS}/profile": lambda state: [p.name for p in state.qos.profiles],
    f"{QOS}/map": lambda state: ["default"],
    f"{QOS}/priority-flow-control": lambda state: [p.name for p in state.qos.pfc],
}


def _parser(spec: MenuProperty, names: Parse | None) -> Parse:
    """How set/add read a value of `spec`'s type (platforms.yaml); `names`: the menu's own
    check of a `name` (unique, built-in items kept)."""
    lo, hi = spec.range or (0, 0)
    parse: Parse = {
        "bool": boolean,
        "int": integer(lo, hi),
        "choice": choice(spec.choices),
        "text": text,
        "classes": lambda ctx, prop, value: parse_classes(prop, value),
        "dscp-list": lambda ctx, prop, value: parse_dscp_list(prop, value),
        "rate": lambda ctx, prop, value: parse_rate(prop, value,
                                                    ctx.dev.platform.max_egress_rate_bps),
        "ref": choice(lambda ctx: REFS[spec.ref](ctx.state)),
        "name": names or text,
    }[spec.type]
    return word_or(spec.words, parse) if spec.words else parse


def qos_table(menu: str, names: Parse | None = None, **attrs: str | None
              ) -> dict[str, Prop[Any]]:
    """`menu`'s settable properties as platforms.yaml types them (``attrs``: where a value
    goes when not to the attribute its name says, keyed with ``_`` for ``-``; None: dropped)."""
    return {p.name: Prop(p.name, parse=_parser(p, names),
                         attr=attrs.get(p.name.replace("-", "_"), ""))
            for p in routeros_properties().menus[menu] if not p.read_only}


def qos_apply(table: dict[str, Prop[Any]], dev: Device, state: State, item: Any,
              args: dict[str, str]) -> None:
    """Read `args` (checked already) into `item`, in the order given."""
    apply(table, Ctx(dev, state, item), args)


def parse_rate(prop: str, text: str, maximum: int) -> int:
    """``10G``, ``10.0Gbps``, ``100M``, ``0`` -> bit/s; above the chip's shaper: a failure."""
    m = _RATE.match(text.strip())
    if m is None:
        raise Trap(f"invalid value for argument {prop}", CATEGORY_ARGUMENT)
    bps = int(float(m.group(1)) * _UNITS[m.group(2)])
    if bps > maximum:
        raise Trap(f"failure: max bit rate is {format_rate(maximum).replace('.0Gbps', 'G')}")
    return bps


def format_rate(bps: int) -> str:
    """bit/s as RouterOS prints a rate: ``10.0Gbps``, ``100.0Mbps``, ``0``."""
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if bps and bps % size == 0:
            return f"{bps / size:.1f}{unit}bps"
    return str(bps)


def parse_classes(prop: str, text: str) -> str:
    """A list of traffic classes 0..7 (``3`` or ``3,4``), normalised."""
    out = sorted({parse_int(prop, part, 0, 7) for part in text.split(",") if part})
    if not out:
        raise no_match(prop)
    return ",".join(str(n) for n in out)


def parse_dscp_list(prop: str, text: str) -> str:
    """DSCP values and ranges 0..63 (``26``, ``1,3-4``), kept as written when valid."""
    for part in text.split(","):
        low, _, high = part.partition("-")
        parse_int(prop, low, 0, 63)
        if high:
            parse_int(prop, high, 0, 63)
    if not text:
        raise no_match(prop)
    return text


def dscp_values(text: str) -> list[int]:
    """``1,3-4`` -> [1, 3, 4]."""
    out: list[int] = []
    for part in text.split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def missing(arg: str) -> Trap:
    return Trap(f"missing value(s) of argument(s) {arg}")


def offloaded(state: State) -> str:
    return yes(state.switch.qos_hw_offloading)


def listing(menu: str, rows: Callable[[Device], list[Row]], **more: Handler
            ) -> dict[str, Handler]:
    """``print``/``getall`` of `rows` cut by the table, plus the menu's other commands."""

    def handler(dev: Device, req: Request) -> Reply:
        state = dev.load()
        return print_reply([table_row(state, menu, r) for r in rows(dev)], req)

    return {"print": handler, "getall": handler, **more}
