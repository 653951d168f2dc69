"""Intents and healthy facts for star4 and ring4, loaded once."""

from __future__ import annotations

import pytest

from fabric.facts import Facts
from fabric.intent.model import Intent
from tests.validators import builder


@pytest.fixture(scope="session")
def star4() -> Intent:
    return builder.intent("star4")


@pytest.fixture(scope="session")
def ring4() -> Intent:
    return builder.intent("ring4")


@pytest.fixture(scope="session")
def star_facts(star4: Intent) -> Facts:
    return builder.healthy(star4)


@pytest.fixture(scope="session")
def ring_facts(ring4: Intent) -> Facts:
    return builder.healthy(ring4)
