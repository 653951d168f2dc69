"""Run a shell script over a host's existing Netmiko SSH session (an exec channel on the same
transport: no prompt matching, the exit status comes back)."""

from __future__ import annotations

import time
from typing import Any


class ProbeTimeout(RuntimeError):
    """The script did not finish within its timeout."""


def exec_script(connection: Any, script: str, timeout: float) -> tuple[int, str]:
    """(exit status, stdout+stderr) of `script` run by the login shell of the session's user."""
    transport = connection.remote_conn_pre.get_transport()
    channel = transport.open_session(timeout=10)
    try:
        channel.set_combine_stderr(True)
        channel.settimeout(1.0)
        channel.exec_command(script)
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = channel.recv(65536)
            except TimeoutError:
                data = None
            if data == b"":
                break
            if data:
                chunks.append(data)
            if time.monotonic() > deadline:
                raise ProbeTimeout(f"probe script did not finish within {timeout:g} s")
        return channel.recv_exit_status(), b"".join(chunks).decode(errors="replace")
    finally:
        channel.close()
