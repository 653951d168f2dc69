"""Shared bits for the collection tests: fixture paths and the star4 intent."""

from __future__ import annotations

from pathlib import Path

from fabric.intent.build import load_intent
from fabric.intent.model import Intent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
TWINS = ["enp1s0f0np0", "enP2p1s0f0np0", "enp1s0f1np1", "enP2p1s0f1np1"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def star4() -> Intent:
    return load_intent("star4", None)


def ring4() -> Intent:
    return load_intent("ring4", None)
