"""Registry of emulated menus by API path."""

from __future__ import annotations

from fabric.intent.platforms import version_tuple

from . import address, bridge, interface, ip, neighbor, qos, system, tools, users
from .base import Menu

MENUS: dict[str, Menu] = {
    m.path: m
    for mod in (system, interface, bridge, address, neighbor, qos, ip, users, tools)
    for m in mod.MENUS
}


def available(menu: Menu, version: str) -> bool:
    """Whether a switch running `version` has `menu` (older versions lack newer menus)."""
    return not menu.since or version_tuple(version)[:2] >= menu.since


def directories(version: str | None = None) -> set[str]:
    """Every directory that holds a menu (``/ip``, ``/interface/bridge``, ...), at `version`
    (None: any version)."""
    out = {""}
    for path, menu in MENUS.items():
        if version is not None and not available(menu, version):
            continue
        parts = path.split("/")
        out.update("/".join(parts[:i]) for i in range(2, len(parts) + 1))
    return out
