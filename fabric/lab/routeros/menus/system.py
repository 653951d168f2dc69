"""``/system/identity``, ``/system/resource``, ``/system/clock``, and the print-only
``/system/health`` and ``/system/package`` (board data, see ``platform.Platform``)."""

from __future__ import annotations

from ..clock import clock_row, format_duration
from ..device import Device
from .base import Menu, Reply, Request, Row, check_args, print_reply


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
        "build-time": p.build_time,
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


def health_print(dev: Device, req: Request) -> Reply:
    """RouterOS 7's health: one row per sensor, ``name``/``value``/``type`` (C, RPM, V, "")."""
    rows = [{".id": f"*{n:X}", "name": name, "value": value, "type": kind}
            for n, (name, value, kind) in enumerate(dev.platform.health, start=1)]
    return print_reply(rows, req)


def package_rows(dev: Device) -> list[Row]:
    """The installed packages, at the version the switch runs."""
    version = dev.load().version.split()[0]
    p = dev.platform
    return [{".id": f"*{n:X}", "name": name, "version": version, "build-time": p.build_time,
             "scheduled": "", "size": str(size), "available": "false", "disabled": "false"}
            for n, (name, size) in enumerate(p.packages, start=1)]


def package_print(dev: Device, req: Request) -> Reply:
    return print_reply(package_rows(dev), req)


MENUS = (
    Menu("/system/identity", {"print": identity_print, "set": identity_set}),
    Menu("/system/resource", {"print": resource_print}),
    Menu("/system/clock", {"print": clock_print, "getall": clock_print}),
    Menu("/system/health", {"print": health_print, "getall": health_print}),
    Menu("/system/package", {"print": package_print, "getall": package_print}),
)
