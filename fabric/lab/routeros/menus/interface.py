"""``/interface`` and ``/interface/ethernet``: print, set, enable/disable (monitor: ``monitor``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from ..backend import KernelCounters
from ..clock import format_datetime
from ..counters import ethernet_counters, interface_counters, never_used
from ..device import Device, EtherView, LaneView
from ..netlink import LinkTimes
from ..platform import ETHER_LINK_MODES, FEC_MODES, LINK_MODES
from ..state import Ether, Lane, State
from .base import (
    Menu,
    Reply,
    Request,
    Row,
    check_args,
    pick,
    print_reply,
    target_refs,
    toggle,
    yes,
)
from .monitor import ethernet_monitor
from .props import (
    Ctx,
    Parse,
    Prop,
    apply,
    boolean,
    by_name,
    choice,
    choices,
    integer,
    render,
    settable,
    text,
)


def _lane_key(lane: Lane) -> tuple[str, str]:
    return lane.id, lane.name


def _ether_key(ether: Ether) -> tuple[str, str]:
    return ether.id, ether.name


def _is_ref_of(ref: str, item_id: str, name: str) -> bool:
    return (ref.startswith("*") and ref.upper() == item_id.upper()) or ref == name


def split_ether_refs(state: State, refs: list[str]) -> tuple[list[str], list[str]]:
    """(refs naming a copper port, the rest)."""
    ethers = [r for r in refs if any(_is_ref_of(r, e.id, e.name) for e in state.ethers)]
    return ethers, [r for r in refs if r not in ethers]


def bridge_members(state: State) -> set[str]:
    return {p.interface for p in state.bridge_ports if not p.disabled}


def lane_counters(lane: Lane, counters: dict[str, KernelCounters]) -> KernelCounters | None:
    """A lane's kernel counters; an uncabled lane's are those of a port never used."""
    return counters.get(lane.name) if lane.cable_gbps > 0 else never_used(lane.name)


def link_times(times: LinkTimes | None) -> Row:
    """``last-link-down-time`` / ``last-link-up-time`` in the switch's clock; absent where the
    link never went down / never came up since the server started."""
    row: Row = {}
    if times is not None and times.down is not None:
        row["last-link-down-time"] = format_datetime(times.down)
    if times is not None and times.up is not None:
        row["last-link-up-time"] = format_datetime(times.up)
    return row


class IfView(NamedTuple):
    """One ``/interface`` item, whichever kind: what its row prints (None: not on this kind)."""

    id: str
    name: str
    default_name: str | None
    type: str
    mtu: str
    actual_mtu: str
    l2mtu: str
    max_l2mtu: str | None
    mac: str
    times: Row
    counters: Row
    running: bool
    slave: bool
    disabled: bool
    comment: str


#: ``/interface``: lanes, copper ports and bridges print alike (blocks: link times, counters)
INTERFACE: tuple[Prop[IfView], ...] = (
    Prop(".id", lambda v: v.id),
    Prop("name", lambda v: v.name),
    Prop("default-name", lambda v: v.default_name),
    Prop("type", lambda v: v.type),
    Prop("mtu", lambda v: v.mtu),
    Prop("actual-mtu", lambda v: v.actual_mtu),
    Prop("l2mtu", lambda v: v.l2mtu),
    Prop("max-l2mtu", lambda v: v.max_l2mtu),
    Prop("mac-address", lambda v: v.mac),
    Prop("last-link-*-time", lambda v: v.times),
    Prop("rx-byte, tx-byte, ...", lambda v: v.counters),
    Prop("running", lambda v: yes(v.running)),
    Prop("slave", lambda v: yes(v.slave)),
    Prop("disabled", lambda v: yes(v.disabled)),
    Prop("dynamic", "false"),
    Prop("comment", lambda v: v.comment or None),
)


def interface_rows(dev: Device) -> list[Row]:
    """Every lane, copper port and bridge, as ``/interface print`` lists them (the counters
    read from the kernel now, see ``counters``; link times as the API server saw carrier
    change, by name)."""
    state, links, counters = dev.load(), dev.links(), dev.counters()
    times = dev.observed().links
    members = bridge_members(state)
    top = str(dev.platform.max_l2mtu)
    views: list[IfView] = []
    for lane in state.lanes:
        lv = dev.lane_view(lane, links)
        views.append(IfView(
            lane.id, lane.name, lane.default_name, "ether", str(lv.mtu), str(lv.mtu),
            str(lane.l2mtu), top, lv.mac,
            link_times(times.get(lane.name)) if lane.cable_gbps > 0 else {},
            interface_counters(lane_counters(lane, counters)), lv.running,
            lane.name in members, lv.disabled, lane.comment))
    for ether in state.ethers:
        ev = dev.ether_view(ether, links)
        views.append(IfView(
            ether.id, ether.name, ether.default_name, "ether", str(ether.mtu), str(ether.mtu),
            str(ether.l2mtu), top, ev.mac, link_times(times.get(ether.name)),
            interface_counters(counters.get(ether.name)), ev.running, ether.name in members,
            ev.disabled, ether.comment))
    for bridge in state.bridges:
        link = links.get(bridge.name)
        views.append(IfView(
            bridge.id, bridge.name, None, "bridge", bridge.mtu,
            str(link.mtu) if link else "1500", "65535", None, link.mac if link else "",
            link_times(times.get(bridge.name)), interface_counters(counters.get(bridge.name)),
            bool(link and link.admin_up and not bridge.disabled), False, bridge.disabled,
            bridge.comment))
    return [render(INTERFACE, v) for v in views]


def _mtu() -> Parse:
    return integer(lambda p: p.min_mtu, lambda p: p.max_l2mtu)


def _l2mtu() -> Parse:
    return integer(0, lambda p: p.max_l2mtu)


def _named(port: Callable[[Any], Lane | Ether]) -> tuple[Prop[Any], ...]:
    return (Prop(".id", lambda v: port(v).id), Prop("name", lambda v: port(v).name),
            Prop("default-name", lambda v: port(v).default_name))


def _link(port: Callable[[Any], Lane | Ether], modes: Iterable[str]) -> tuple[Prop[Any], ...]:
    """The settings every ethernet port has, from ``arp`` to ``speed``."""
    return (Prop("mac-address", lambda v: v.mac),
            Prop("orig-mac-address", lambda v: port(v).mac_address),
            Prop("arp", "enabled"), Prop("arp-timeout", "auto"), Prop("loop-protect", "default"),
            Prop("auto-negotiation", lambda v: yes(port(v).auto_negotiation), boolean),
            Prop("advertise", lambda v: ",".join(port(v).advertise), choices(modes)),
            Prop("speed", lambda v: port(v).speed, choice(modes)))


_FLOW: tuple[Prop[Any], ...] = (
    Prop("tx-flow-control", "off"), Prop("rx-flow-control", "off"),
    Prop("bandwidth", "unlimited/unlimited"))


def _state(port: Callable[[Any], Lane | Ether]) -> tuple[Prop[Any], ...]:
    return (Prop("running", lambda v: yes(v.running)),
            Prop("disabled", lambda v: yes(v.disabled), boolean),
            Prop("comment", lambda v: port(v).comment or None, text))


def _lane(v: LaneView) -> Lane:
    return v.lane


def _ether(v: EtherView) -> Ether:
    return v.ether


#: ``/interface/ethernet`` for a lane: what print shows, in order, and what set takes
ETHERNET: tuple[Prop[LaneView], ...] = (
    *_named(_lane),
    Prop("mtu", lambda v: str(v.mtu), _mtu()),
    Prop("l2mtu", lambda v: str(v.lane.l2mtu), _l2mtu()),
    *_link(_lane, LINK_MODES),
    Prop("fec-mode", lambda v: v.lane.fec_mode, choice(FEC_MODES)),
    *_FLOW,
    Prop("switch", "switch1"),
    *_state(_lane),
)
#: the same for the RJ45 port: its own link modes, and no FEC (a copper port has none)
ETHER: tuple[Prop[EtherView], ...] = (
    *_named(_ether),
    Prop("mtu", lambda v: str(v.ether.mtu), _mtu()),
    Prop("l2mtu", lambda v: str(v.ether.l2mtu), _l2mtu()),
    *_link(_ether, ETHER_LINK_MODES),
    *_FLOW,
    *_state(_ether),
)
LANE_SETTABLE = settable(ETHERNET)
_LANE, _ETHER = by_name(ETHERNET), by_name(ETHER)


def ethernet_row(dev: Device, view: LaneView) -> Row:
    return render(ETHERNET, view)


def ether_row(view: EtherView) -> Row:
    return render(ETHER, view)


def ethernet_stats_rows(dev: Device) -> list[Row]:
    """``/interface/ethernet print stats``: per port its id, name and kernel counters."""
    state, counters = dev.load(), dev.counters()
    rows = [
        {".id": lane.id, "name": lane.name, **ethernet_counters(lane_counters(lane, counters))}
        for lane in state.lanes
    ]
    rows += [
        {".id": e.id, "name": e.name, **ethernet_counters(counters.get(e.name))}
        for e in state.ethers
    ]
    return rows


def ethernet_print(dev: Device, req: Request) -> Reply:
    """``print`` lists the settings; ``print stats`` the counters instead."""
    if "stats" in req.args:
        return print_reply(ethernet_stats_rows(dev), req)
    state, links = dev.load(), dev.links()
    rows = [ethernet_row(dev, dev.lane_view(lane, links)) for lane in state.lanes]
    rows += [ether_row(dev.ether_view(e, links)) for e in state.ethers]
    return print_reply(rows, req)


_Port = TypeVar("_Port", Lane, Ether)


def _changed_lane(dev: Device, state: State, lane: Lane, args: dict[str, str]) -> Lane:
    """Validated copy of ``lane`` with ``args`` applied (nothing touched yet)."""
    return _changed(dev, state, lane, args, _LANE, strict=False)


def _changed_ether(dev: Device, state: State, ether: Ether, args: dict[str, str]) -> Ether:
    """The same for the RJ45 port: an argument its table lacks (``fec-mode``) is refused."""
    return _changed(dev, state, ether, args, _ETHER, strict=True)


def _changed(dev: Device, state: State, port: _Port, args: dict[str, str],
             table: Mapping[str, Prop[Any]], strict: bool) -> _Port:
    new = replace(port, advertise=list(port.advertise))
    apply(table, Ctx(dev, state, new), args, strict)
    return new


def set_ethers(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    """Settings of the copper port(s): state only (the lab's management netdev is left alone)."""
    with dev.edit() as state:
        for ether in pick(state.ethers, refs, _ether_key):
            state.ethers[state.ethers.index(ether)] = _changed_ether(dev, state, ether, args)


def set_lanes(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    """Apply settings to lanes (and ether1) named by id or name, in the state and the kernel."""
    state = dev.load()
    ether_refs, lane_refs = split_ether_refs(state, refs)
    pick(state.lanes, lane_refs, _lane_key)  # every miss and bad value before any change
    for ether in pick(state.ethers, ether_refs, _ether_key):
        _changed_ether(dev, state, ether, args)
    if ether_refs:
        set_ethers(dev, ether_refs, args)
    if not lane_refs:
        return
    with dev.edit() as state:
        names = [lane.name for lane in pick(state.lanes, lane_refs, _lane_key)]
        for lane in [state.lane(n) for n in names]:  # validate every value before any change
            assert lane is not None
            _changed_lane(dev, state, lane, args)
        for name in names:
            before = state.lane(name)
            assert before is not None
            after = _changed_lane(dev, state, before, args)
            state.lanes[state.lanes.index(before)] = after
            dev.apply_lane(state, before, after, dev.links())


def ethernet_set(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers", *LANE_SETTABLE))
    refs = target_refs(req)
    set_lanes(dev, refs, {k: v for k, v in req.args.items() if k in LANE_SETTABLE})
    return Reply()


def interface_print(dev: Device, req: Request) -> Reply:
    return print_reply(interface_rows(dev), req)


def interface_set(dev: Device, req: Request) -> Reply:
    """``/interface set``: mtu/l2mtu/disabled/comment for lanes (bridges go to their menu)."""
    check_args(req, (".id", "numbers", "mtu", "l2mtu", "disabled", "comment"))
    from .bridge import set_bridges  # bridges and lanes share the /interface namespace

    state = dev.load()
    refs = target_refs(req)
    bridge_refs = [r for r in refs if any(r in (b.id, b.name) for b in state.bridges)]
    lane_refs = [r for r in refs if r not in bridge_refs]
    args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
    if lane_refs:
        set_lanes(dev, lane_refs, args)
    if bridge_refs:
        set_bridges(dev, bridge_refs, args)
    return Reply()


MENUS = (
    Menu("/interface", {"print": interface_print, "getall": interface_print, "set": interface_set}),
    Menu(
        "/interface/ethernet",
        {
            "print": ethernet_print,
            "getall": ethernet_print,
            "set": ethernet_set,
            "enable": toggle(set_lanes, False),
            "disable": toggle(set_lanes, True),
            "monitor": ethernet_monitor,
        },
    ),
)
