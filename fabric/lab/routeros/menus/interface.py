"""``/interface`` and ``/interface/ethernet`` (print, set, enable/disable, monitor)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TypeVar

from ..backend import KernelCounters
from ..clock import format_datetime
from ..counters import ethernet_counters, interface_counters, never_used
from ..device import Device, EtherView, LaneView
from ..errors import unknown_parameter
from ..netlink import LinkTimes
from ..platform import ETHER_LINK_MODES, FEC_MODES, LINK_MODES
from ..state import Ether, Lane, State
from .base import (
    Menu,
    Reply,
    Request,
    Row,
    check_args,
    parse_bool,
    parse_choice,
    parse_int,
    parse_list,
    pick,
    print_reply,
    target_refs,
    toggle,
    yes,
)

LANE_SETTABLE = (
    "mtu",
    "l2mtu",
    "speed",
    "auto-negotiation",
    "advertise",
    "fec-mode",
    "disabled",
    "comment",
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


def interface_rows(dev: Device) -> list[Row]:
    """Every lane, copper port and bridge, as ``/interface print`` lists them (the counters
    read from the kernel now, see ``counters``; link times as the API server saw carrier
    change, by name)."""
    state, links, counters = dev.load(), dev.links(), dev.counters()
    times = dev.observed().links
    members = bridge_members(state)
    rows: list[Row] = []
    for lane in state.lanes:
        view = dev.lane_view(lane, links)
        row = {
            ".id": lane.id,
            "name": lane.name,
            "default-name": lane.default_name,
            "type": "ether",
            "mtu": str(view.mtu),
            "actual-mtu": str(view.mtu),
            "l2mtu": str(lane.l2mtu),
            "max-l2mtu": str(dev.platform.max_l2mtu),
            "mac-address": view.mac,
            **(link_times(times.get(lane.name)) if lane.cable_gbps > 0 else {}),
            **interface_counters(lane_counters(lane, counters)),
            "running": yes(view.running),
            "slave": yes(lane.name in members),
            "disabled": yes(view.disabled),
            "dynamic": "false",
        }
        if lane.comment:
            row["comment"] = lane.comment
        rows.append(row)
    for ether in state.ethers:
        ev = dev.ether_view(ether, links)
        row = {
            ".id": ether.id,
            "name": ether.name,
            "default-name": ether.default_name,
            "type": "ether",
            "mtu": str(ether.mtu),
            "actual-mtu": str(ether.mtu),
            "l2mtu": str(ether.l2mtu),
            "max-l2mtu": str(dev.platform.max_l2mtu),
            "mac-address": ev.mac,
            **link_times(times.get(ether.name)),
            **interface_counters(counters.get(ether.name)),
            "running": yes(ev.running),
            "slave": yes(ether.name in members),
            "disabled": yes(ev.disabled),
            "dynamic": "false",
        }
        if ether.comment:
            row["comment"] = ether.comment
        rows.append(row)
    for bridge in state.bridges:
        link = links.get(bridge.name)
        actual = str(link.mtu) if link else "1500"
        running = bool(link and link.admin_up and not bridge.disabled)
        row = {
            ".id": bridge.id,
            "name": bridge.name,
            "type": "bridge",
            "mtu": bridge.mtu,
            "actual-mtu": actual,
            "l2mtu": "65535",
            "mac-address": link.mac if link else "",
            **link_times(times.get(bridge.name)),
            **interface_counters(counters.get(bridge.name)),
            "running": yes(running),
            "slave": "false",
            "disabled": yes(bridge.disabled),
            "dynamic": "false",
        }
        if bridge.comment:
            row["comment"] = bridge.comment
        rows.append(row)
    return rows


def ethernet_row(dev: Device, view: LaneView) -> Row:
    lane = view.lane
    row = {
        ".id": lane.id,
        "name": lane.name,
        "default-name": lane.default_name,
        "mtu": str(view.mtu),
        "l2mtu": str(lane.l2mtu),
        "mac-address": view.mac,
        "orig-mac-address": lane.mac_address,
        "arp": "enabled",
        "arp-timeout": "auto",
        "loop-protect": "default",
        "auto-negotiation": yes(lane.auto_negotiation),
        "advertise": ",".join(lane.advertise),
        "speed": lane.speed,
        "fec-mode": lane.fec_mode,
        "tx-flow-control": "off",
        "rx-flow-control": "off",
        "bandwidth": "unlimited/unlimited",
        "switch": "switch1",
        "running": yes(view.running),
        "disabled": yes(view.disabled),
    }
    if lane.comment:
        row["comment"] = lane.comment
    return row


def ether_row(view: EtherView) -> Row:
    e = view.ether
    row = {
        ".id": e.id,
        "name": e.name,
        "default-name": e.default_name,
        "mtu": str(e.mtu),
        "l2mtu": str(e.l2mtu),
        "mac-address": view.mac,
        "orig-mac-address": e.mac_address,
        "arp": "enabled",
        "arp-timeout": "auto",
        "loop-protect": "default",
        "auto-negotiation": yes(e.auto_negotiation),
        "advertise": ",".join(e.advertise),
        "speed": e.speed,
        "tx-flow-control": "off",
        "rx-flow-control": "off",
        "bandwidth": "unlimited/unlimited",
        "running": yes(view.running),
        "disabled": yes(view.disabled),
    }
    if e.comment:
        row["comment"] = e.comment
    return row


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


def _changed_lane(dev: Device, lane: Lane, args: dict[str, str]) -> Lane:
    """Validated copy of ``lane`` with ``args`` applied (nothing touched yet)."""
    return _changed(dev, lane, args, LINK_MODES, fec=True)


def _changed_ether(dev: Device, ether: Ether, args: dict[str, str]) -> Ether:
    """The same for the RJ45 port: its own link modes, and no FEC (a copper port has none)."""
    return _changed(dev, ether, args, ETHER_LINK_MODES, fec=False)


def _changed(dev: Device, port: _Port, args: dict[str, str], modes: Iterable[str],
             fec: bool) -> _Port:
    p = dev.platform
    new = replace(port, advertise=list(port.advertise))
    for key, text in args.items():
        if key == "mtu":
            new.mtu = parse_int("mtu", text, p.min_mtu, p.max_l2mtu)
        elif key == "l2mtu":
            new.l2mtu = parse_int("l2mtu", text, 0, p.max_l2mtu)
        elif key == "speed":
            new.speed = parse_choice("speed", text, modes)
        elif key == "auto-negotiation":
            new.auto_negotiation = parse_bool("auto-negotiation", text)
        elif key == "advertise":
            new.advertise = parse_list("advertise", text, modes)
        elif key == "fec-mode" and fec and isinstance(new, Lane):
            new.fec_mode = parse_choice("fec-mode", text, FEC_MODES)
        elif key == "disabled":
            new.disabled = parse_bool("disabled", text)
        elif key == "comment":
            new.comment = text
        elif not fec:
            raise unknown_parameter()
    return new


def set_ethers(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    """Settings of the copper port(s): state only (the lab's management netdev is left alone)."""
    with dev.edit() as state:
        for ether in pick(state.ethers, refs, _ether_key):
            state.ethers[state.ethers.index(ether)] = _changed_ether(dev, ether, args)


def set_lanes(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    """Apply settings to lanes (and ether1) named by id or name, in the state and the kernel."""
    state = dev.load()
    ether_refs, lane_refs = split_ether_refs(state, refs)
    pick(state.lanes, lane_refs, _lane_key)  # every miss and bad value before any change
    for ether in pick(state.ethers, ether_refs, _ether_key):
        _changed_ether(dev, ether, args)
    if ether_refs:
        set_ethers(dev, ether_refs, args)
    if not lane_refs:
        return
    with dev.edit() as state:
        names = [lane.name for lane in pick(state.lanes, lane_refs, _lane_key)]
        for lane in [state.lane(n) for n in names]:  # validate every value before any change
            assert lane is not None
            _changed_lane(dev, lane, args)
        for name in names:
            before = state.lane(name)
            assert before is not None
            after = _changed_lane(dev, before, args)
            state.lanes[state.lanes.index(before)] = after
            dev.apply_lane(state, before, after, dev.links())


def ethernet_set(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers", *LANE_SETTABLE))
    refs = target_refs(req)
    set_lanes(dev, refs, {k: v for k, v in req.args.items() if k in LANE_SETTABLE})
    return Reply()


def monitor_row(view: LaneView) -> Row:
    lane, result = view.lane, view.negotiated
    row: Row = {"name": lane.name}
    if view.running:
        row |= {
            "status": "link-ok",
            "auto-negotiation": "done" if lane.auto_negotiation else "disabled",
            "rate": f"{result.gbps}Gbps",
            "full-duplex": "true",
            "tx-flow-control": "false",
            "rx-flow-control": "false",
            "fec": result.fec,
        }
    else:  # training: the PHY is at work on a lit cable; else nothing to train with
        autoneg = "incomplete" if view.training else "failed"
        row |= {
            "status": "no-link",
            "auto-negotiation": autoneg if lane.auto_negotiation else "disabled",
        }
    row["advertising"] = ",".join(lane.advertise)
    row["sfp-module-present"] = yes(view.present)
    if view.present:
        row |= {
            "sfp-rx-loss": yes(not view.running and not view.training),
            "sfp-tx-fault": "false",
            "sfp-type": "QSFP56-DD" if lane.cable_gbps >= 400 else "QSFP56",
            "sfp-connector-type": "no-separable-connector",
            "sfp-link-length-copper": "1m",
            "sfp-vendor-name": "Mikrotik",
            "sfp-vendor-part-number": f"DAC-{lane.cable_gbps}G",
            "eeprom-checksum": "good",
        }
    return row


def ether_monitor_row(view: EtherView) -> Row:
    e = view.ether
    row: Row = {"name": e.name}
    if view.running:
        row |= {
            "status": "link-ok",
            "auto-negotiation": "done" if e.auto_negotiation else "disabled",
            "rate": "1Gbps",
            "full-duplex": "true",
            "tx-flow-control": "false",
            "rx-flow-control": "false",
        }
    else:
        row |= {"status": "no-link", "auto-negotiation": "failed" if e.auto_negotiation
                else "disabled"}  # fmt: skip
    row["advertising"] = ",".join(e.advertise)
    return row


def ethernet_monitor(dev: Device, req: Request) -> Reply:
    """``monitor =numbers=X =once=``: one snapshot per lane (without ``once`` also one)."""
    check_args(req, (".id", "numbers", "once", "duration", "interval"))
    state, links = dev.load(), dev.links()
    items: list[Lane | Ether] = [*state.lanes, *state.ethers]
    picked = pick(items, target_refs(req), lambda x: (x.id, x.name))
    rows = [
        monitor_row(dev.lane_view(x, links))
        if isinstance(x, Lane)
        else ether_monitor_row(dev.ether_view(x, links))
        for x in picked
    ]
    if req.proplist is not None:
        rows = [{k: r[k] for k in req.proplist if k in r} for r in rows]
    return Reply(rows=rows)


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
