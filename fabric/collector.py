"""The cyclic collector paused while long-lived objects load."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused (and turned back on if it was on): imports make only
    long-lived objects (modules, classes, functions), which it would only rescan."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
