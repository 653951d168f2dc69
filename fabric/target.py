"""What a command works on: an intent plus where and how to reach its hosts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fabric.credentials import Credentials, from_environment
from fabric.errors import InputError

if TYPE_CHECKING:
    from fabric.intent.model import Intent


@dataclass(frozen=True)
class Target:
    """The intent plus where and how to reach its hosts."""

    intent: Intent
    inventory_dir: Path
    credentials: Credentials
    lab: str | None = None


def files_target(topology: str | None, inventory: Path | None) -> Target:
    """`-t TOPOLOGY [-i INVENTORY]`: credentials from the environment (see credentials.py)."""
    from fabric.intent.build import load_intent
    from fabric.intent.locate import default_inventory

    if topology is None:
        raise InputError("name a topology with -t TOPOLOGY (or use --lab NAME)")
    inv = inventory or default_inventory()
    return Target(load_intent(topology, inv), inv, from_environment())
