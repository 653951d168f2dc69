"""``/user`` (the one user of the state, group ``full``) and ``/user/active`` (the API sessions
logged in now); print-only."""

from __future__ import annotations

from ..clock import format_datetime
from ..device import Device
from .base import Menu, Reply, Request, print_reply


def user_print(dev: Device, req: Request) -> Reply:
    state = dev.load()
    row = {".id": "*1", "name": state.username, "group": "full", "address": "",
           "inactivity-timeout": "10m", "inactivity-policy": "none"}
    last = dev.active_users.last_login.get(state.username)
    if last is not None:
        row["last-logged-in"] = format_datetime(last)
    row |= {"expired": "false", "disabled": "false"}
    return print_reply([row], req)


def active_print(dev: Device, req: Request) -> Reply:
    rows = [{".id": a.id, "when": format_datetime(a.when), "name": a.name,
             "address": a.address, "via": a.via, "group": a.group, "radius": "false"}
            for a in dev.active_users.now()]
    return print_reply(rows, req)


MENUS = (
    Menu("/user", {"print": user_print, "getall": user_print}),
    Menu("/user/active", {"print": active_print, "getall": active_print}),
)
