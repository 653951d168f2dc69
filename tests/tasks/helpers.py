"""Shared bits for the task tests: fixture paths, the star4 intent, a fake SSH session."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from fabric.facts_builder import Section
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.remote.batch import MARK, split_batch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
TWINS = ["enp1s0f0np0", "enP2p1s0f0np0", "enp1s0f1np1", "enP2p1s0f1np1"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def sections_of(transcript: str) -> dict[str, Section]:
    """Every section of a recorded facts transcript, by name (whatever batch it answered)."""
    names = [line.split()[2] for line in transcript.splitlines()
             if line.startswith(f"{MARK} begin ")]
    return {j.name: Section(j.name, j.text.rstrip("\n"), j.exit_code)
            for j in split_batch(transcript, names) if j.exit_code is not None}


def star4() -> Intent:
    return load_intent("star4", None)


def ring4() -> Intent:
    return load_intent("ring4", None)


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
