"""Shared test helpers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fabric.cli import main

REPO = Path(__file__).resolve().parents[1]
TOPOLOGIES = REPO / "topologies"
INVENTORY = REPO / "inventory"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist (`make test` runs `-n auto`): every lab test is one unit of work, so
    one worker runs them all, in order, on its session labs (their names are fixed), while
    the other workers take the unit tests. (`--dist loadgroup` would say the same with a
    marker, but does not group under pytest 9.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LabTestsTogether(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return "tests/lab" if nodeid.startswith("tests/lab/") else nodeid

    return LabTestsTogether(config, log)


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
