"""push_shell over the exec channel: exit status, trimmed output, files written from stdin."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fabric.remote import shell as push_shell
from fabric.remote.shell import RemoteCommandFailed, sh, sh_ok, sh_steps, write_file

from .helpers import FakeSession


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> FakeSession:
    fake = FakeSession()
    monkeypatch.setattr(push_shell, "session", lambda _task: fake)
    return fake


TASK: Any = SimpleNamespace(host=SimpleNamespace(name="spark01"))


def test_sh_returns_status_and_output_without_edge_newlines(session: FakeSession) -> None:
    assert sh(TASK, "printf '\\nA\\n  b\\n\\n'; echo oops >&2; exit 5") == (5, "A\n  b\n\noops")
    assert sh(TASK, "true") == (0, "")
    assert len(session.channels) == 2


def test_sh_ok_raises_with_the_output(session: FakeSession) -> None:
    assert sh_ok(TASK, "echo fine") == "fine"
    with pytest.raises(RemoteCommandFailed, match="spark01: `echo no; exit 2` exited 2: no"):
        sh_ok(TASK, "echo no; exit 2")


def test_write_file_sends_the_content_over_stdin(session: FakeSession, tmp_path: Path) -> None:
    path = tmp_path / "new dir" / "run.sh"
    content = "#!/bin/sh\necho 'it''s' \"$HOME\"\n" + "x" * 300_000 + "\n"  # > one argv string
    write_file(TASK, str(path), content, mode="755")
    assert path.read_text() == content
    assert oct(path.stat().st_mode & 0o777) == "0o755"
    assert not path.with_name("run.sh.fabric-tmp").exists()
    assert "xxxx" not in session.channels[0].command
    assert session.channels[0].stdin == content.encode()


def test_sh_steps_is_one_channel(session: FakeSession) -> None:
    assert sh_steps(TASK, ["echo one", "echo oops >&2; false"]) == [(0, "one"), (1, "oops")]
    assert len(session.channels) == 1
