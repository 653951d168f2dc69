"""``/ip/address``: emulated only. The lab's management address stays on the kernel's ether1
whatever this menu says, so moving it (the README's preparation steps) never cuts the lab off.
"""

from __future__ import annotations

import ipaddress

from ..device import Device
from ..errors import CATEGORY_ARGUMENT, Trap
from ..state import IpAddress, State, network_of
from .base import (
    Menu,
    Reply,
    Request,
    Row,
    check_args,
    parse_bool,
    parse_choice,
    pick,
    print_reply,
    target_refs,
    toggle,
    yes,
)

ADDRESS_ARGS = ("address", "network", "interface", "disabled", "comment")


def _key(a: IpAddress) -> tuple[str, str]:
    return a.id, ""


def _missing(prop: str) -> Trap:
    return Trap(f"missing value(s) of argument(s) {prop}", CATEGORY_ARGUMENT)


def _invalid(prop: str) -> Trap:
    return Trap(f"invalid value for argument {prop}", CATEGORY_ARGUMENT)


def _parse_address(text: str) -> str:
    """``A.B.C.D/N`` as given (host bits kept), ``A.B.C.D`` as ``/32``."""
    try:
        iface = ipaddress.IPv4Interface(text)
    except ValueError:
        raise _invalid("address") from None
    return f"{iface.ip}/{iface.network.prefixlen}"


def _parse_network(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise _invalid("network") from None


def _bridge_of(state: State, interface: str) -> str | None:
    """The bridge ``interface`` is an active port of, if any."""
    return next(
        (p.bridge for p in state.bridge_ports if p.interface == interface and not p.disabled),
        None,
    )


def address_rows(dev: Device) -> list[Row]:
    """An address on a bridge port is invalid (RouterOS: put it on the bridge); its
    ``actual-interface`` is the bridge. One on an interface that is gone is invalid too."""
    state = dev.load()
    known = set(state.interface_names())
    rows: list[Row] = []
    for a in state.addresses:
        bridge = _bridge_of(state, a.interface)
        row = {
            ".id": a.id,
            "address": a.address,
            "network": a.network,
            "interface": a.interface,
            "actual-interface": bridge or a.interface,
            "invalid": yes(bridge is not None or a.interface not in known),
            "dynamic": "false",
            "disabled": yes(a.disabled),
        }
        if a.comment:
            row["comment"] = a.comment
        rows.append(row)
    return rows


def address_print(dev: Device, req: Request) -> Reply:
    return print_reply(address_rows(dev), req)


def _apply(state: State, item: IpAddress, args: dict[str, str]) -> None:
    if "address" in args:
        item.address = _parse_address(args["address"])
        item.network = network_of(item.address)
    if "network" in args:
        item.network = _parse_network(args["network"])
    if "interface" in args:
        item.interface = parse_choice("interface", args["interface"], state.interface_names())
    if "disabled" in args:
        item.disabled = parse_bool("disabled", args["disabled"])
    if "comment" in args:
        item.comment = args["comment"]


def _check_unique(state: State, item: IpAddress) -> None:
    for other in state.addresses:
        same = other.address.split("/")[0] == item.address.split("/")[0]
        if other.id != item.id and same and other.interface == item.interface:
            raise Trap("failure: already have such address")


def address_add(dev: Device, req: Request) -> Reply:
    check_args(req, ADDRESS_ARGS)
    for prop in ("address", "interface"):
        if not req.args.get(prop):
            raise _missing(prop)
    with dev.edit() as state:
        item = IpAddress(id="", address="", network="", interface="")
        _apply(state, item, dict(req.args))
        _check_unique(state, item)
        item.id = state.new_id()
        state.addresses.append(item)
    return Reply(ret=item.id)


def set_addresses(dev: Device, refs: list[str], args: dict[str, str]) -> None:
    with dev.edit() as state:
        for item in pick(state.addresses, refs, _key):
            _apply(state, item, args)
            _check_unique(state, item)


def address_set(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers", *ADDRESS_ARGS))
    args = {k: v for k, v in req.args.items() if k in ADDRESS_ARGS}
    set_addresses(dev, target_refs(req), args)
    return Reply()


def address_remove(dev: Device, req: Request) -> Reply:
    check_args(req, (".id", "numbers"))
    with dev.edit() as state:
        for item in pick(state.addresses, target_refs(req), _key):
            state.addresses.remove(item)
    return Reply()


MENUS = (
    Menu(
        "/ip/address",
        {
            "print": address_print,
            "getall": address_print,
            "add": address_add,
            "set": address_set,
            "remove": address_remove,
            "enable": toggle(set_addresses, False),
            "disable": toggle(set_addresses, True),
        },
    ),
)
