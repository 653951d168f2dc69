"""Shared test helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric.cli import main

REPO = Path(__file__).resolve().parents[1]
TOPOLOGIES = REPO / "topologies"
INVENTORY = REPO / "inventory"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The lab tests last, each group in its own order: the unit tests run first and at their
    own pace (not beside a lab run's leftovers), and a failing one shows within minutes."""
    items[:] = sorted(items, key=lambda item: item.get_closest_marker("lab") is not None)


@pytest.fixture(autouse=True)
def _no_site_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("FABRIC_") and key != "FABRIC_REGEN_GOLDEN":
            monkeypatch.delenv(key, raising=False)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `fabric ARGS` in-process; return (exit code, stdout, stderr)."""
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
