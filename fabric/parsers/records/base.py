"""The base of every parsed record."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    """Base of every parsed record."""
