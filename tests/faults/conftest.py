"""Paper labs for the fault tests: a lab record and intent, no namespace, no root."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.lab.faults.targets import Ctx
from tests.faults.fakes import paper_lab


@pytest.fixture(scope="session")
def star(tmp_path_factory: pytest.TempPathFactory) -> Ctx:
    return Ctx(*paper_lab("star4", tmp_path_factory.mktemp("star4")))


@pytest.fixture(scope="session")
def ring(tmp_path_factory: pytest.TempPathFactory) -> Ctx:
    return Ctx(*paper_lab("ring4", tmp_path_factory.mktemp("ring4")))


@pytest.fixture
def lab_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The paper lab's directory (faults.json goes there)."""
    from fabric.lab.lifecycle import registry

    monkeypatch.setattr(registry, "lab_dir", lambda name: tmp_path)
    return tmp_path
