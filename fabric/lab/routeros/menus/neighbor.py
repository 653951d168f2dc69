"""``/ip/neighbor`` (the API server's LLDP table, see ``discovery``) and
``/ip/neighbor/discovery-settings``."""

from __future__ import annotations

from ..clock import format_duration
from ..device import Device
from ..discovery import NeighborEntry, current
from ..platform import DISCOVERY_PROTOCOLS
from .base import Menu, Reply, Request, Row, check_args, parse_bool, parse_list, print_reply, yes


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


def discovery_print(dev: Device, req: Request) -> Reply:
    d = dev.load().discovery
    row = {
        "discover-interface-list": d.discover_interface_list,
        "protocol": d.protocol,
        "lldp-dcbx": yes(d.lldp_dcbx),
        "lldp-med-net-policy-vlan": "disabled",
        "mode": "tx-and-rx",
    }
    return print_reply([row], req)


def discovery_set(dev: Device, req: Request) -> Reply:
    check_args(req, ("protocol", "lldp-dcbx", "discover-interface-list"))
    with dev.edit() as state:
        d = state.discovery
        if "protocol" in req.args:
            d.protocol = ",".join(parse_list("protocol", req.args["protocol"], DISCOVERY_PROTOCOLS))
        if "lldp-dcbx" in req.args:
            d.lldp_dcbx = parse_bool("lldp-dcbx", req.args["lldp-dcbx"])
        if "discover-interface-list" in req.args:
            d.discover_interface_list = req.args["discover-interface-list"]
    return Reply()


MENUS = (
    Menu("/ip/neighbor", {"print": neighbor_print, "getall": neighbor_print}),
    Menu("/ip/neighbor/discovery-settings", {"print": discovery_print, "set": discovery_set}),
)
