"""``/ip/neighbor`` (the API server's LLDP table, see ``discovery``) and
``/ip/neighbor/discovery-settings``."""

from __future__ import annotations

from ..clock import format_duration
from ..device import Device
from ..discovery import NeighborEntry, current
from ..platform import DISCOVERY_PROTOCOLS
from ..state import Discovery
from .base import Menu, Reply, Request, Row, check_args, parse_list, print_reply, yes
from .props import Ctx, Prop, apply, boolean, by_name, render, settable, text


def _address(addresses: tuple[str, ...]) -> str:
    """RouterOS's ``address``: the first IPv4 management address, else the first one."""
    v4 = [a for a in addresses if ":" not in a]
    return (v4 or list(addresses) or [""])[0]


def neighbor_row(entry: NeighborEntry, now: float) -> Row:
    d = entry.lldpdu
    return {
        ".id": entry.id,
        "interface": entry.interface,
        "address": _address(d.management_addresses),
        "mac-address": entry.mac_address,
        "identity": d.system_name,
        "platform": d.system_description.split(" ")[0] if d.system_description else "",
        "interface-name": d.port_id,
        "system-description": d.system_description,
        "discovered-by": "lldp",
        "age": format_duration(entry.age(now)),
    }


def neighbor_rows(dev: Device) -> list[Row]:
    """The entries whose TTL has not run out, their age counted from their last frame."""
    if "lldp" not in dev.load().discovery.protocol.split(","):
        return []
    now = dev.now()
    return [neighbor_row(e, now) for e in current(dev.observed().neighbors, now)]


def neighbor_print(dev: Device, req: Request) -> Reply:
    return print_reply(neighbor_rows(dev), req)


#: ``/ip/neighbor/discovery-settings``: what print shows, in order, and what set takes
DISCOVERY: tuple[Prop[Discovery], ...] = (
    Prop("discover-interface-list", lambda d: d.discover_interface_list, text),
    Prop("protocol", lambda d: d.protocol,
         lambda ctx, prop, value: ",".join(parse_list(prop, value, DISCOVERY_PROTOCOLS))),
    Prop("lldp-dcbx", lambda d: yes(d.lldp_dcbx), boolean),
    Prop("lldp-med-net-policy-vlan", "disabled"),
    Prop("mode", "tx-and-rx"),
)
_DISCOVERY = by_name(DISCOVERY)
#: the order set reads its arguments in (the first bad one is refused)
_SET_ORDER = ("protocol", "lldp-dcbx", "discover-interface-list")


def discovery_print(dev: Device, req: Request) -> Reply:
    return print_reply([render(DISCOVERY, dev.load().discovery)], req)


def discovery_set(dev: Device, req: Request) -> Reply:
    check_args(req, settable(DISCOVERY))
    with dev.edit() as state:
        args = {k: req.args[k] for k in _SET_ORDER if k in req.args}
        apply(_DISCOVERY, Ctx(dev, state, state.discovery), args)
    return Reply()


MENUS = (
    Menu("/ip/neighbor", {"print": neighbor_print, "getall": neighbor_print}),
    Menu("/ip/neighbor/discovery-settings", {"print": discovery_print, "set": discovery_set}),
)
