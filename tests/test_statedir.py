"""One state directory: the gate's reports, push's backups and locks, and launch records share
one root, resolved the same way ($FABRIC_STATE_DIR, else $XDG_STATE_HOME/fabric, else
~/.local/state/fabric)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.gate import default_report_path
from fabric.push import backup


def test_xdg_state_home_puts_reports_backups_and_locks_under_one_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "xdg" / "fabric"
    assert default_report_path() == root / "last-report.json"
    assert backup.run_dir("R") == root / "runs" / "R"
    assert backup.state_dir() / "locks" == root / "locks"


def test_fabric_state_dir_wins_over_xdg_state_home(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_report_path().parent == tmp_path / "state"
    assert backup.run_dir("R") == tmp_path / "state" / "runs" / "R"


def test_without_either_it_is_under_the_home_directory(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_STATE_DIR", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / ".local" / "state" / "fabric"
    assert default_report_path() == root / "last-report.json"
    assert backup.run_dir("R") == root / "runs" / "R"
