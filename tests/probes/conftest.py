"""Fixtures for the probe tests: the shipped topologies as intents, recorded outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from tests.conftest import INVENTORY

OUTPUTS = Path(__file__).parent / "outputs"


@pytest.fixture(scope="session")
def intents() -> dict[str, Intent]:
    return {name: load_intent(name, INVENTORY) for name in ("star4", "star8", "ring4")}


def recorded(name: str) -> str:
    return (OUTPUTS / name).read_text()
