"""A fake SSH session for the remote-layer tests: exec channels answered by a local bash."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

Reply = Callable[[str, bytes], tuple[int, str]]


def local_shell(command: str, stdin: bytes) -> tuple[int, str]:
    """Run an exec channel's command in a local bash: (exit status, stdout+stderr)."""
    done = subprocess.run(["bash", "-c", command], input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60, check=False)
    return done.returncode, done.stdout.decode(errors="replace")


class FakeChannel:
    """A paramiko exec channel whose command is answered by `reply` once stdin is closed."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.command = ""
        self.stdin = b""
        self.rc = -1
        self.pending: list[bytes] = []
        self.closed = False

    def set_combine_stderr(self, combine: bool) -> None:
        assert combine

    def settimeout(self, timeout: float) -> None:
        pass

    def exec_command(self, command: str) -> None:
        self.command = command

    def sendall(self, data: bytes) -> None:
        self.stdin += data

    def shutdown_write(self) -> None:
        self.rc, out = self.reply(self.command, self.stdin)
        self.pending = [out.encode()[i:i + 7000] for i in range(0, len(out.encode()), 7000)]

    def recv(self, size: int) -> bytes:
        return self.pending.pop(0) if self.pending else b""

    def recv_exit_status(self) -> int:
        return self.rc

    def close(self) -> None:
        self.closed = True


class FakeSession:
    """A Netmiko connection as `exec_script` uses it: one transport that opens exec channels."""

    def __init__(self, reply: Reply = local_shell) -> None:
        self.reply = reply
        self.channels: list[FakeChannel] = []

    @property
    def remote_conn_pre(self) -> FakeSession:
        return self

    def get_transport(self) -> FakeSession:
        return self

    def open_session(self, timeout: float) -> FakeChannel:
        channel = FakeChannel(self.reply)
        self.channels.append(channel)
        return channel
