"""Interactive RouterOS terminal for sshd ``ForceCommand`` (Netmiko ``mikrotik_routeros``).

It runs the console language of ``cli`` (print/add/set/remove/enable/disable/monitor on every
emulated menu, ``[ find ]``, ``;``), plus ``/export terse``, ``/system identity print``,
``/system resource print`` and ``/quit``; anything else gets RouterOS's ``bad command name``.
Echo comes from the pty that sshd allocates, as on the real console.
"""

from __future__ import annotations

import contextlib
import sys
import termios
from collections.abc import Iterator
from typing import TextIO

from .cli import Cli
from .device import Device
from .export import export_terse

__all__ = ["export_terse", "run_shell"]


@contextlib.contextmanager
def _terminal(stream: TextIO) -> Iterator[bool]:
    """On a pty: no kernel echo, no CR->NL (so CRLF is one Enter); we echo, like RouterOS."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield False
        return
    mode = termios.tcgetattr(fd)
    mode[0] &= ~termios.ICRNL
    mode[3] &= ~(termios.ECHO | termios.ECHONL)
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    try:
        yield True
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def _bytes_as_they_are(stream: TextIO) -> None:
    """RouterOS values are bytes: what is not UTF-8 passes as the same bytes (the API stores
    such bytes as surrogates, see ``codec.WORD_ERRORS``)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")


def run_shell(device: Device, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Prompt, read a line, answer, until ``/quit`` or end of input."""
    inp = stdin or sys.stdin
    out = stdout or sys.stdout
    _bytes_as_they_are(inp)
    _bytes_as_they_are(out)
    with _terminal(inp) as echo:
        return _loop(Cli(device), inp, out, echo)


def _loop(cli: Cli, inp: TextIO, out: TextIO, echo: bool) -> int:
    while True:
        state = cli.device.load()
        out.write(f"[{state.username}@{state.identity}] > ")
        out.flush()
        line = inp.readline()
        if not line:
            return 0
        if echo:
            out.write(line.rstrip("\r\n") + "\n")
        if not line.strip():
            continue
        reply = cli.execute(line)
        if reply is None:
            return 0
        if reply:
            out.write(reply + "\n\n")
        out.flush()
