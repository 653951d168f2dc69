"""Print-only menus of things a switch here has none of: ``/tool/netwatch`` (no hosts
watched), ``/queue/simple`` and ``/queue/tree`` (no queues). Empty, as on the switch."""

from __future__ import annotations

from .base import Menu
from .ip import empty, printing

MENUS = tuple(Menu(path, printing(empty))
              for path in ("/tool/netwatch", "/queue/simple", "/queue/tree"))
