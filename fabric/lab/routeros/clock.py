"""The switch's clock: the local time of the emulator's process, and how RouterOS prints time.

A clock is a function returning seconds since the epoch (``time.time``; tests pass their own).
Date-times are floored to the second, in the process's local time zone (``TZ`` or
/etc/localtime), as ``/system/clock`` and ``last-link-up-time`` print them on RouterOS 7.10+.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

Clock = Callable[[], float]

_UNITS = (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60))


def format_duration(seconds: float) -> str:
    """RouterOS duration in whole seconds (floor): ``7s``, ``1m5s``, ``1h2m3s``, ``1w2d``;
    zero parts left out, ``0s`` when under a second (negative: ``0s``)."""
    rest = max(0, math.floor(seconds))
    parts: list[str] = []
    for unit, size in _UNITS:
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    if rest or not parts:
        parts.append(f"{rest}s")
    return "".join(parts)


def _local(epoch: float) -> time.struct_time:
    return time.localtime(math.floor(epoch))


def format_datetime(epoch: float) -> str:
    """``2026-12-01 09:30:00`` (local time, floored to the second)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", _local(epoch))


def format_gmt_offset(seconds: int) -> str:
    """``+02:00`` / ``-05:30`` (RouterOS ``gmt-offset``)."""
    sign = "-" if seconds < 0 else "+"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def time_zone_name(environ: dict[str, str] | None = None,
                   localtime: Path = Path("/etc/localtime")) -> str:
    """The IANA name of the process's zone (``TZ``, else /etc/localtime's link target);
    ``manual`` (RouterOS's name for a fixed offset) when neither names one."""
    env = os.environ if environ is None else environ
    tz = env.get("TZ", "").lstrip(":")
    if tz:
        return tz if ("/" in tz and not tz.startswith("/")) or tz in ("UTC", "GMT") else "manual"
    try:
        target = os.readlink(localtime)
    except OSError:
        return "UTC" if not localtime.exists() else "manual"
    _, sep, name = target.partition("zoneinfo/")
    return name if sep and name else "manual"


def clock_row(epoch: float) -> dict[str, str]:
    """The ``/system/clock`` row at ``epoch``."""
    local = _local(epoch)
    return {
        "time": time.strftime("%H:%M:%S", local),
        "date": time.strftime("%Y-%m-%d", local),
        "time-zone-autodetect": "false",
        "time-zone-name": time_zone_name(),
        "gmt-offset": format_gmt_offset(local.tm_gmtoff),
        "dst-active": "true" if local.tm_isdst > 0 else "false",
    }
