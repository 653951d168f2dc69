"""The one runner: a script on an exec channel, exit status from the channel, stdin then EOF."""

from __future__ import annotations

import pytest

from fabric.remote.exec import LOGIN_ENV, ScriptTimeout, exec_script

from .helpers import FakeChannel, FakeSession


def test_status_output_and_stdin_come_through_the_channel() -> None:
    session = FakeSession()
    rc, out = exec_script(session, "cat; echo err >&2; exit 3", 10, stdin=b"in\n")
    assert (rc, out) == (3, "in\nerr\n")
    assert session.channels[0].command == "cat; echo err >&2; exit 3"
    assert session.channels[0].closed


def test_stdin_is_closed_even_without_data() -> None:
    assert exec_script(FakeSession(), "cat; echo done", 10) == (0, "done\n")


def test_login_environment_is_prepended_and_quiet() -> None:
    session = FakeSession()
    rc, out = exec_script(session, 'case ":$PATH:" in *:/sbin:*) echo sbin;; esac', 10,
                          login=True)
    assert session.channels[0].command.startswith(LOGIN_ENV)
    assert (rc, out) == (0, "sbin\n")  # whatever the profiles print is discarded


def test_a_script_past_its_timeout_raises_read_timeout() -> None:
    class Silent(FakeChannel):
        def recv(self, size: int) -> bytes:
            raise TimeoutError

    class Hung(FakeSession):
        def open_session(self, timeout: float) -> FakeChannel:
            channel = Silent(self.reply)
            self.channels.append(channel)
            return channel

    session = Hung(lambda _c, _s: (0, ""))
    with pytest.raises(ScriptTimeout, match=r"did not finish within 0\.01 s"):
        exec_script(session, "sleep 60", 0.01)
    assert session.channels[0].closed
