"""Registry of emulated menus by API path."""

from __future__ import annotations

from . import address, bridge, interface, neighbor, system
from .base import Menu

MENUS: dict[str, Menu] = {
    m.path: m for mod in (system, interface, bridge, address, neighbor) for m in mod.MENUS
}
