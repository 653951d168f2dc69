"""Fixtures: the in-process RouterOS emulator and a local target (`tests.remote.conftest`).

The Sparks of these tests answer with a recorded batch transcript
(`tests/fixtures/facts/lab_star4_spark01.transcript`) that has no `lldp_beacon` section: the
collection here announces no beacon (its batch is the one that transcript answers). The
beacon row is tested on its own (`test_spark_batch`) and end to end in the lab."""

from collections.abc import Iterator

import pytest

from tests.remote.conftest import emulator, target

__all__ = ["emulator", "no_beacon", "target"]


@pytest.fixture(autouse=True)
def no_beacon(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr("fabric.collect.gather.new_beacon", lambda: None)
    yield
