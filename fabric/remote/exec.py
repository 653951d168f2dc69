"""The one way the toolkit runs shell on a Spark: a script on an exec channel of the host's
SSH session (Nornir connection `SPARK_SSH`, `fabric.remote.transport`): a new channel on the
same transport, not a new login.

No prompt matching and no pty: the exit status comes from the channel, lines have no length
limit, stdout and stderr come back together, and stdin carries `stdin` then end-of-file.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nornir.core.task import Task

#: The Nornir connection name of a Spark's exec-only SSH session (`fabric.remote.transport`).
SPARK_SSH = "spark_ssh"


class ScriptTimeout(Exception):
    """A remote script did not finish within its timeout."""


def spark_session(task: Task) -> Any:
    """The task's host's exec-only SSH session (`SPARK_SSH`), opened on first use."""
    return task.host.get_connection(SPARK_SSH, task.nornir.config)

#: With `login=True`, prepended to the script: the environment an interactive login has (the
#: profiles, read quietly with stdin closed) plus the sbin directories.
LOGIN_ENV = (
    '{ . /etc/profile; for f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; '
    'do [ -r "$f" ] && { . "$f"; break; }; done; } </dev/null >/dev/null 2>&1\n'
    'export PATH="$PATH:/usr/sbin:/sbin"\n'
)


class RunningScript:
    """A script started on its own exec channel and left running (`start_script`); `wait`
    reads what it printed once it is done, while the session serves other channels."""

    def __init__(self, channel: Any, timeout: float) -> None:
        self.channel = channel
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.chunks: list[bytes] = []
        self.ended = False

    def _read(self, until: bytes | None = None) -> None:
        """Read what the script prints, to its end or (`until`) until that line came."""
        channel = self.channel
        channel.settimeout(1.0)
        while not self.ended:
            if until is not None and until in b"".join(self.chunks):
                return
            try:
                data = channel.recv(65536)
            except TimeoutError:
                data = None
            if data == b"":
                self.ended = True
            elif data:
                self.chunks.append(data)
            if time.monotonic() > self.deadline:
                raise ScriptTimeout(f"remote script did not finish within {self.timeout:g} s")

    def read_until(self, line: bytes) -> None:
        """Wait until the script has printed `line` (or ended); what it printed is kept."""
        try:
            self._read(line)
        except BaseException:
            self.channel.close()
            raise

    def wait(self) -> tuple[int, str]:
        """(exit status, stdout+stderr); ScriptTimeout past the script's timeout
        (counted from its start)."""
        try:
            self._read()
            return self.channel.recv_exit_status(), b"".join(self.chunks).decode(
                errors="replace")
        finally:
            self.channel.close()


def start_script(connection: Any, script: str, timeout: float, stdin: bytes = b"",
                 login: bool = False) -> RunningScript:
    """Start `script` (as `exec_script` runs it) on a new exec channel and return at once."""
    transport = connection.remote_conn_pre.get_transport()
    channel = transport.open_session(timeout=10)
    try:
        channel.set_combine_stderr(True)
        channel.settimeout(timeout)
        channel.exec_command(LOGIN_ENV + script if login else script)
        if stdin:
            channel.sendall(stdin)
        channel.shutdown_write()
    except BaseException:
        channel.close()
        raise
    return RunningScript(channel, timeout)


def exec_script(connection: Any, script: str, timeout: float, stdin: bytes = b"",
                login: bool = False) -> tuple[int, str]:
    """(exit status, stdout+stderr) of `script` run by the login shell of the session's user.

    `login`: in the environment of an interactive login (`LOGIN_ENV`). Raises
    ScriptTimeout when the script has not finished within `timeout` seconds.
    """
    return start_script(connection, script, timeout, stdin, login).wait()
