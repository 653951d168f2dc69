"""``/interface/bridge`` and ``/interface/bridge/port``; both follow into the kernel."""

from __future__ import annotations

from typing import NamedTuple

from ..backend import KernelLink
from ..device import Device
from ..errors import Trap, no_match
from ..state import Bridge, BridgePort, State
from .base import Menu, Reply, Request, Row, check_args, pick, print_reply, target_refs, toggle, yes
from .props import (
    Ctx,
    Prop,
    apply,
    boolean,
    by_name,
    choice,
    integer,
    render,
    settable,
    text,
    word_or,
)

PROTOCOL_MODES = ("none", "rstp", "stp", "mstp")


def _bridge_key(b: Bridge) -> tuple[str, str]:
    return b.id, b.name


def _port_key(p: BridgePort) -> tuple[str, str]:
    return p.id, ""


def _interface_names(state: State) -> list[str]:
    return state.interface_names()


class BridgeView(NamedTuple):
    bridge: Bridge
    link: KernelLink | None


def _bridge_name(ctx: Ctx, prop: str, value: str) -> str:
    if value != ctx.item.name and value in _interface_names(ctx.state):
        raise Trap("failure: already have interface with such name")
    return value


#: ``/interface/bridge``: what print shows, in order, and what set/add take
BRIDGE: tuple[Prop[BridgeView], ...] = (
    Prop(".id", lambda v: v.bridge.id),
    Prop("name", lambda v: v.bridge.name, _bridge_name),
    Prop("mtu", lambda v: v.bridge.mtu,
         word_or(("auto",), integer(lambda p: p.min_mtu, lambda p: p.max_l2mtu))),
    Prop("actual-mtu", lambda v: str(v.link.mtu) if v.link else "1500"),
    Prop("l2mtu", "65535"),
    Prop("arp", "enabled"),
    Prop("mac-address", lambda v: v.link.mac if v.link else ""),
    Prop("protocol-mode", lambda v: v.bridge.protocol_mode, choice(PROTOCOL_MODES)),
    Prop("fast-forward", "true"),
    Prop("igmp-snooping", "false"),
    Prop("auto-mac", "true"),
    Prop("ageing-time", "5m"),
    Prop("priority", "0x8000"),
    Prop("vlan-filtering", lambda v: yes(v.bridge.vlan_filtering), boolean),
    Prop("dhcp-snooping", "false"),
    Prop("running", lambda v: yes(bool(v.link and not v.bridge.disabled))),
    Prop("disabled", lambda v: yes(v.bridge.disabled), boolean),
    Prop("comment", lambda v: v.bridge.comment or None, text),
)
BRIDGE_ARGS = settable(BRIDGE)
_BRIDGE = by_name(BRIDGE)


def _apply_bridge_args(dev: Device, state: State, bridge: Bridge, args: dict[str, str]) -> None:
    apply(_BRIDGE, Ctx(dev, state, bridge), args)


def bridge_rows(dev: Device) -> list[Row]:
    state, links = dev.load(), dev.links()
    return [render(BRIDGE, BridgeView(b, links.get(b.name))) for b in state.bridges]


def bridge_print(dev: Device, req: Request) -> Reply:
    return print_reply(bridge_rows(dev), req)


def bridge_add(dev: Device, req: Request) -> Reply:
    check_args(req, BRIDGE_ARGS)
    with dev.edit() as state:
        n = 1
        while f"bridge{n}" in _interface_names(state):
            n += 1
        bridge = Bridge(id=state.new_id(), name=f"bridge{n}")
        _apply_bridge_args(dev, state, bridge, dict(req.args))
        if bridge.name in _interface_names(state):
            raise Trap("failure: already have interface with such name")
        dev.create_bridge(bridge)
        state.bridges.append(bridge)
    return Reply(ret=bridge.id)


def set_bridges(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    with dev.edit() as state:
        for bridge in pick(state.bridges, refs, _bridge_key):
            old_name, old_disabled = bridge.name, bridge.disabled
            _apply_bridge_args(dev, state, bridge, args)
            if bridge.name != old_name:
                raise Trap("renaming a bridge is not supported by the lab emulator")
            if bridge.disabled != old_disabled:
                dev.backend.set_admin(bridge.name, not bridge.disabled)
            if bridge.mtu != "auto":
                dev.backend.set_mtu(bridge.name, int(bridge.mtu))


def bridge_set(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers", *BRIDGE_ARGS))
    args = {k: v for k, v in req.args.items() if k in BRIDGE_ARGS}
    set_bridges(dev, target_refs(req), args)
    return Reply()


def bridge_remove(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers"))
    with dev.edit() as state:
        for bridge in pick(state.bridges, target_refs(req), _bridge_key):
            for port in [p for p in state.bridge_ports if p.bridge == bridge.name]:
                dev.attach(port.interface, None)
                state.bridge_ports.remove(port)
            dev.delete_bridge(bridge.name)
            state.bridges.remove(bridge)
    return Reply()


# --- ports -------------------------------------------------------------------------------


def hw_offloaded(state: State, port: BridgePort) -> bool:
    """Only the first bridge is switched in hardware on this chip, and only ``hw=yes`` ports."""
    first = state.bridges[0].name if state.bridges else None
    return port.hw and not port.disabled and port.bridge == first


class PortView(NamedTuple):
    port: BridgePort
    number: int
    offloaded: bool
    inactive: bool


def _active(prop: str) -> Prop[PortView]:
    """A status that reads ``true`` while the port forwards."""
    return Prop(prop, lambda v: yes(not v.inactive))


#: ``/interface/bridge/port``: what print shows, in order, and what set/add take
PORT: tuple[Prop[PortView], ...] = (
    Prop(".id", lambda v: v.port.id),
    Prop("interface", lambda v: v.port.interface,
         choice(lambda ctx: _interface_names(ctx.state))),
    Prop("bridge", lambda v: v.port.bridge,
         choice(lambda ctx: [b.name for b in ctx.state.bridges])),
    *(Prop(name, fixed) for name, fixed in (
        ("priority", "0x80"), ("path-cost", "10"), ("internal-path-cost", "10"),
        ("edge", "auto"), ("point-to-point", "auto"), ("learn", "auto"), ("horizon", "none"),
        ("auto-isolate", "false"), ("restricted-role", "false"),
        ("restricted-tcn", "false"))),
    Prop("pvid", lambda v: str(v.port.pvid), integer(1, 4094)),
    *(Prop(name, fixed) for name, fixed in (
        ("frame-types", "admit-all"), ("ingress-filtering", "true"),
        ("unknown-unicast-flood", "true"), ("unknown-multicast-flood", "true"),
        ("broadcast-flood", "true"), ("tag-stacking", "false"), ("bpdu-guard", "false"),
        ("trusted", "false"), ("multicast-router", "temporary-query"),
        ("fast-leave", "false"))),
    Prop("hw", lambda v: yes(v.port.hw), boolean),
    Prop("hw-offload", lambda v: yes(v.offloaded)),
    Prop("port-number", lambda v: str(v.number)),
    Prop("role", lambda v: "disabled-port" if v.inactive else "designated-port"),
    _active("edge-port"),
    Prop("edge-port-discovery", "true"),
    _active("point-to-point-port"),
    Prop("external-fdb-status", "false"),
    _active("sending-rstp"),
    _active("learning"),
    _active("forwarding"),
    Prop("inactive", lambda v: yes(v.inactive)),
    Prop("dynamic", "false"),
    Prop("disabled", lambda v: yes(v.port.disabled), boolean),
    Prop("hw-offload-group", lambda v: "switch1" if v.offloaded else None),
    Prop("comment", lambda v: v.port.comment or None, text),
)
PORT_ARGS = settable(PORT)
_PORT = by_name(PORT)


def _running(dev: Device, state: State, port: BridgePort, links: dict[str, KernelLink]) -> bool:
    """Whether the port's interface has link (a lane, the copper port, else any netdev)."""
    lane = next((x for x in state.lanes if x.name == port.interface), None)
    ether = next((e for e in state.ethers if e.name == port.interface), None)
    if lane is not None:
        return dev.lane_view(lane, links).running
    if ether is not None:
        return dev.ether_view(ether, links).running
    return port.interface in links


def port_rows(dev: Device) -> list[Row]:
    state, links = dev.load(), dev.links()
    return [render(PORT, PortView(p, number, hw_offloaded(state, p),
                                  p.disabled or not _running(dev, state, p, links)))
            for number, p in enumerate(state.bridge_ports, start=1)]


def port_print(dev: Device, req: Request) -> Reply:
    return print_reply(port_rows(dev), req)


def _apply_port_args(state: State, port: BridgePort, args: dict[str, str],
                     dev: Device) -> None:
    apply(_PORT, Ctx(dev, state, port), args)


def port_add(dev: Device, req: Request) -> Reply:
    check_args(req, PORT_ARGS)
    with dev.edit() as state:
        if "interface" not in req.args:
            raise no_match("interface")
        if "bridge" not in req.args:
            raise no_match("bridge")
        port = BridgePort(id=state.new_id(), bridge="", interface="")
        _apply_port_args(state, port, dict(req.args), dev)
        if any(p.interface == port.interface for p in state.bridge_ports):
            raise Trap("failure: device already added as bridge port")
        if port.interface == port.bridge:
            raise Trap("failure: cannot add bridge to itself")
        if not port.disabled:
            dev.attach(port.interface, port.bridge)
        state.bridge_ports.append(port)
    return Reply(ret=port.id)


def port_set(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers", *PORT_ARGS))
    args = {k: v for k, v in req.args.items() if k in PORT_ARGS}
    set_ports(dev, target_refs(req), args)
    return Reply()


def set_ports(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    with dev.edit() as state:
        for port in pick(state.bridge_ports, refs, _port_key):
            old_interface = port.interface
            _apply_port_args(state, port, args, dev)
            if old_interface != port.interface:
                dev.attach(old_interface, None)
            dev.attach(port.interface, None if port.disabled else port.bridge)


def port_remove(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers"))
    with dev.edit() as state:
        for port in pick(state.bridge_ports, target_refs(req), _port_key):
            dev.attach(port.interface, None)
            state.bridge_ports.remove(port)
    return Reply()


MENUS = (
    Menu(
        "/interface/bridge",
        {
            "print": bridge_print,
            "getall": bridge_print,
            "add": bridge_add,
            "set": bridge_set,
            "remove": bridge_remove,
            "enable": toggle(set_bridges, False),
            "disable": toggle(set_bridges, True),
        },
    ),
    Menu(
        "/interface/bridge/port",
        {
            "print": port_print,
            "getall": port_print,
            "add": port_add,
            "set": port_set,
            "remove": port_remove,
            "enable": toggle(set_ports, False),
            "disable": toggle(set_ports, True),
        },
    ),
)
