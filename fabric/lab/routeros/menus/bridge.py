"""``/interface/bridge`` and ``/interface/bridge/port``; both follow into the kernel."""

from __future__ import annotations

from ..device import Device
from ..errors import Trap, no_match
from ..state import Bridge, BridgePort, State
from .base import (
    Menu,
    Reply,
    Request,
    Row,
    check_args,
    parse_bool,
    parse_choice,
    parse_int,
    pick,
    print_reply,
    target_refs,
    toggle,
    yes,
)

BRIDGE_ARGS = ("name", "mtu", "disabled", "protocol-mode", "vlan-filtering", "comment")
PORT_ARGS = ("interface", "bridge", "hw", "disabled", "pvid", "comment")
PROTOCOL_MODES = ("none", "rstp", "stp", "mstp")


def _bridge_key(b: Bridge) -> tuple[str, str]:
    return b.id, b.name


def _port_key(p: BridgePort) -> tuple[str, str]:
    return p.id, ""


def _interface_names(state: State) -> list[str]:
    return state.interface_names()


def _apply_bridge_args(dev: Device, state: State, bridge: Bridge, args: dict[str, str]) -> None:
    for key, text in args.items():
        if key == "name":
            if text != bridge.name and text in _interface_names(state):
                raise Trap("failure: already have interface with such name")
            bridge.name = text
        elif key == "mtu":
            bridge.mtu = (
                text
                if text == "auto"
                else str(parse_int("mtu", text, dev.platform.min_mtu, dev.platform.max_l2mtu))
            )
        elif key == "disabled":
            bridge.disabled = parse_bool("disabled", text)
        elif key == "protocol-mode":
            bridge.protocol_mode = parse_choice("protocol-mode", text, PROTOCOL_MODES)
        elif key == "vlan-filtering":
            bridge.vlan_filtering = parse_bool("vlan-filtering", text)
        elif key == "comment":
            bridge.comment = text


def bridge_rows(dev: Device) -> list[Row]:
    state, links = dev.load(), dev.links()
    rows: list[Row] = []
    for b in state.bridges:
        link = links.get(b.name)
        row = {
            ".id": b.id,
            "name": b.name,
            "mtu": b.mtu,
            "actual-mtu": str(link.mtu) if link else "1500",
            "l2mtu": "65535",
            "arp": "enabled",
            "mac-address": link.mac if link else "",
            "protocol-mode": b.protocol_mode,
            "fast-forward": "true",
            "igmp-snooping": "false",
            "auto-mac": "true",
            "ageing-time": "5m",
            "priority": "0x8000",
            "vlan-filtering": yes(b.vlan_filtering),
            "dhcp-snooping": "false",
            "running": yes(bool(link and not b.disabled)),
            "disabled": yes(b.disabled),
        }
        if b.comment:
            row["comment"] = b.comment
        rows.append(row)
    return rows


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


def port_rows(dev: Device) -> list[Row]:
    state, links = dev.load(), dev.links()
    lanes = {lane.name: lane for lane in state.lanes}
    ethers = {e.name: e for e in state.ethers}
    rows: list[Row] = []
    for number, p in enumerate(state.bridge_ports, start=1):
        lane, ether = lanes.get(p.interface), ethers.get(p.interface)
        if lane is not None:
            running = dev.lane_view(lane, links).running
        elif ether is not None:
            running = dev.ether_view(ether, links).running
        else:
            running = p.interface in links
        offloaded = hw_offloaded(state, p)
        inactive = p.disabled or not running
        row = {
            ".id": p.id,
            "interface": p.interface,
            "bridge": p.bridge,
            "priority": "0x80",
            "path-cost": "10",
            "internal-path-cost": "10",
            "edge": "auto",
            "point-to-point": "auto",
            "learn": "auto",
            "horizon": "none",
            "auto-isolate": "false",
            "restricted-role": "false",
            "restricted-tcn": "false",
            "pvid": str(p.pvid),
            "frame-types": "admit-all",
            "ingress-filtering": "true",
            "unknown-unicast-flood": "true",
            "unknown-multicast-flood": "true",
            "broadcast-flood": "true",
            "tag-stacking": "false",
            "bpdu-guard": "false",
            "trusted": "false",
            "multicast-router": "temporary-query",
            "fast-leave": "false",
            "hw": yes(p.hw),
            "hw-offload": yes(offloaded),
            "port-number": str(number),
            "role": "disabled-port" if inactive else "designated-port",
            "edge-port": yes(not inactive),
            "edge-port-discovery": "true",
            "point-to-point-port": yes(not inactive),
            "external-fdb-status": "false",
            "sending-rstp": yes(not inactive),
            "learning": yes(not inactive),
            "forwarding": yes(not inactive),
            "inactive": yes(inactive),
            "dynamic": "false",
            "disabled": yes(p.disabled),
        }
        if offloaded:
            row["hw-offload-group"] = "switch1"
        if p.comment:
            row["comment"] = p.comment
        rows.append(row)
    return rows


def port_print(dev: Device, req: Request) -> Reply:
    return print_reply(port_rows(dev), req)


def _apply_port_args(state: State, port: BridgePort, args: dict[str, str]) -> None:
    for key, text in args.items():
        if key == "interface":
            port.interface = parse_choice("interface", text, _interface_names(state))
        elif key == "bridge":
            port.bridge = parse_choice("bridge", text, [b.name for b in state.bridges])
        elif key == "hw":
            port.hw = parse_bool("hw", text)
        elif key == "disabled":
            port.disabled = parse_bool("disabled", text)
        elif key == "pvid":
            port.pvid = parse_int("pvid", text, 1, 4094)
        elif key == "comment":
            port.comment = text


def port_add(dev: Device, req: Request) -> Reply:
    check_args(req, PORT_ARGS)
    with dev.edit() as state:
        if "interface" not in req.args:
            raise no_match("interface")
        if "bridge" not in req.args:
            raise no_match("bridge")
        port = BridgePort(id=state.new_id(), bridge="", interface="")
        _apply_port_args(state, port, dict(req.args))
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
            _apply_port_args(state, port, args)
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
