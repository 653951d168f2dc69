"""Per-host push locks."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.push.lock import HostLocked, HostLocks, host_locks


def test_second_push_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    keys = {"spark01": "198.18.1.1-spark01", "spark02": "198.18.1.2-spark02"}
    with host_locks(tmp_path, "RUN-A", keys):
        second = HostLocks(tmp_path, "RUN-B")
        with pytest.raises(HostLocked, match=r"spark01 is locked by push run RUN-A \(pid"):
            second.acquire({"spark01": keys["spark01"]})
    with host_locks(tmp_path, "RUN-C", keys) as again:
        assert len(again._held) == 2


def test_a_refused_acquire_releases_what_it_took(tmp_path: Path) -> None:
    with host_locks(tmp_path, "RUN-A", {"spark02": "b"}):
        other = HostLocks(tmp_path, "RUN-B")
        with pytest.raises(HostLocked):
            other.acquire({"spark01": "a", "spark02": "b"})
        assert other._held == []
        with host_locks(tmp_path, "RUN-C", {"spark01": "a"}):
            pass


def test_lock_exits_3(tmp_path: Path) -> None:
    assert HostLocked("x").exit_code == 3
