"""``/system/identity``, ``/system/resource`` and ``/system/clock``."""

from __future__ import annotations

from ..clock import clock_row, format_duration
from ..device import Device
from .base import Menu, Reply, Request, check_args, print_reply


def format_uptime(seconds: int) -> str:
    """RouterOS duration: ``1w2d3h4m5s`` with zero parts left out (``0s`` when zero)."""
    return format_duration(seconds)


def identity_print(dev: Device, req: Request) -> Reply:
    return print_reply([{"name": dev.load().identity}], req)


def identity_set(dev: Device, req: Request) -> Reply:
    check_args(req, ("name",))
    if "name" in req.args:
        with dev.edit() as state:
            state.identity = req.args["name"]
    return Reply()


def resource_print(dev: Device, req: Request) -> Reply:
    state = dev.load()
    p = dev.platform
    row = {
        "uptime": format_uptime(dev.uptime_s()),
        "version": state.version,
        "build-time": "2025-07-24 10:02:08",
        "factory-software": "7.16",
        "free-memory": str(p.free_memory),
        "total-memory": str(p.total_memory),
        "cpu": p.cpu,
        "cpu-count": str(p.cpu_count),
        "cpu-frequency": str(p.cpu_frequency),
        "cpu-load": "1",
        "free-hdd-space": str(p.free_hdd_space),
        "total-hdd-space": str(p.total_hdd_space),
        "write-sect-since-reboot": "0",
        "write-sect-total": "0",
        "architecture-name": p.architecture_name,
        "board-name": p.board_name,
        "platform": "MikroTik",
    }
    return print_reply([row], req)


def clock_print(dev: Device, req: Request) -> Reply:
    """The switch's clock (the one ``last-link-up-time`` is written in)."""
    return print_reply([clock_row(dev.now())], req)


MENUS = (
    Menu("/system/identity", {"print": identity_print, "set": identity_set}),
    Menu("/system/resource", {"print": resource_print}),
    Menu("/system/clock", {"print": clock_print, "getall": clock_print}),
)
