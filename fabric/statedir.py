"""The state directory: where reports, push runs (backups) and locks, and launch records live.

`$FABRIC_STATE_DIR` when set, else `$XDG_STATE_HOME/fabric`, else `~/.local/state/fabric`.
Read on every call, so a changed environment takes effect at once.
"""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """The state directory ($FABRIC_STATE_DIR, else $XDG_STATE_HOME/fabric, else
    ~/.local/state/fabric)."""
    env = os.environ.get("FABRIC_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "fabric"
