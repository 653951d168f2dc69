"""Fixtures: the in-process RouterOS emulator and a local target (`tests.remote.conftest`)."""

from tests.remote.conftest import emulator, target

__all__ = ["emulator", "target"]
