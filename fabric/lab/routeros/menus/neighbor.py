"""``/ip/neighbor`` (from lldpd) and ``/ip/neighbor/discovery-settings``."""

from __future__ import annotations

from ..device import Device
from ..platform import DISCOVERY_PROTOCOLS
from .base import Menu, Reply, Request, Row, check_args, parse_bool, parse_list, print_reply, yes


def neighbor_rows(dev: Device) -> list[Row]:
    state = dev.load()
    if "lldp" not in state.discovery.protocol.split(","):
        return []
    rows: list[Row] = []
    for index, n in enumerate(dev.backend.neighbors(), start=1):
        rows.append(
            {
                ".id": f"*{index:X}",
                "interface": n.interface,
                "address": n.address,
                "mac-address": n.mac_address,
                "identity": n.identity,
                "platform": n.system_description.split(" ")[0] if n.system_description else "",
                "interface-name": n.interface_name,
                "system-description": n.system_description,
                "discovered-by": "lldp",
                "age": "10s",
            }
        )
    return rows


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
