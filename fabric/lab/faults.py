"""Faults injected into a lab, recorded so `heal` can undo them (placeholder)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    kind: str
    target: str
    summary: str


def active_faults(lab: str) -> list[Fault]:
    return []


def inject(lab: str, kind: str, target: str) -> Fault:
    raise NotImplementedError


def heal(lab: str) -> list[Fault]:
    return []
