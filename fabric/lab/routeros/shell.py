"""Minimal interactive RouterOS terminal for sshd ``ForceCommand`` (Netmiko ``mikrotik_routeros``).

It answers ``/export terse`` (from the shared state file), ``/system identity print``,
``/system resource print`` and ``/quit``; anything else gets RouterOS's ``bad command name``.
Echo comes from the pty that sshd allocates, as on the real console.
"""

from __future__ import annotations

import contextlib
import sys
import termios
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from .platform import CRS804, version_tuple
from .state import Bridge, BridgePort, Discovery, Lane, State, StateFile

DEFAULT_DISCOVERY = Discovery()


def _quote(value: str) -> str:
    if value and all(ch.isalnum() or ch in "-_.,:/*" for ch in value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _yn(value: bool) -> str:
    return "yes" if value else "no"


def _pairs(pairs: list[tuple[str, str]]) -> str:
    return " ".join(f"{k}={_quote(v)}" for k, v in pairs)


def _lane_changes(lane: Lane) -> list[tuple[str, str]]:
    default = Lane(id="", name=lane.name, default_name=lane.default_name)
    out: list[tuple[str, str]] = []
    if lane.advertise != default.advertise:
        out.append(("advertise", ",".join(lane.advertise)))
    if lane.auto_negotiation != default.auto_negotiation:
        out.append(("auto-negotiation", _yn(lane.auto_negotiation)))
    if lane.comment:
        out.append(("comment", lane.comment))
    if lane.disabled:
        out.append(("disabled", "yes"))
    if lane.fec_mode != default.fec_mode:
        out.append(("fec-mode", lane.fec_mode))
    if lane.l2mtu != default.l2mtu:
        out.append(("l2mtu", str(lane.l2mtu)))
    if lane.mtu != default.mtu:
        out.append(("mtu", str(lane.mtu)))
    if lane.speed != default.speed:
        out.append(("speed", lane.speed))
    return out


def _bridge_args(b: Bridge) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if b.comment:
        out.append(("comment", b.comment))
    if b.disabled:
        out.append(("disabled", "yes"))
    if b.mtu != "auto":
        out.append(("mtu", b.mtu))
    out.append(("name", b.name))
    if b.protocol_mode != "rstp":
        out.append(("protocol-mode", b.protocol_mode))
    if b.vlan_filtering:
        out.append(("vlan-filtering", "yes"))
    return out


def _port_args(p: BridgePort) -> list[tuple[str, str]]:
    out = [("bridge", p.bridge)]
    if p.comment:
        out.append(("comment", p.comment))
    if p.disabled:
        out.append(("disabled", "yes"))
    if not p.hw:
        out.append(("hw", "no"))
    out.append(("interface", p.interface))
    if p.pvid != 1:
        out.append(("pvid", str(p.pvid)))
    return out


def export_terse(state: State, now: float | None = None) -> str:
    """``/export terse`` of the configuration that differs from defaults, RouterOS 7 style."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    version = state.version.split()[0]
    lines = [
        f"# {stamp} by RouterOS {version}",
        "# software id = LAB0-CRS8",
        "#",
        f"# model = {CRS804.model}",
        "# serial number = LAB804000001",
    ]
    lines += [f"/interface bridge add {_pairs(_bridge_args(b))}" for b in state.bridges]
    for lane in state.lanes:
        changes = _lane_changes(lane)
        if changes:
            find = f"[ find default-name={lane.default_name} ]"
            lines.append(f"/interface ethernet set {find} {_pairs(changes)}")
    lines += [f"/interface bridge port add {_pairs(_port_args(p))}" for p in state.bridge_ports]
    d = state.discovery
    disc: list[tuple[str, str]] = []
    if d.discover_interface_list != DEFAULT_DISCOVERY.discover_interface_list:
        disc.append(("discover-interface-list", d.discover_interface_list))
    if d.lldp_dcbx and version_tuple(state.version) >= (7, 15):
        disc.append(("lldp-dcbx", "yes"))
    if d.protocol != DEFAULT_DISCOVERY.protocol:
        disc.append(("protocol", d.protocol))
    if disc:
        lines.append(f"/ip neighbor discovery-settings set {_pairs(disc)}")
    lines.append(f"/system identity set name={_quote(state.identity)}")
    return "\n".join(lines)


def _resource(state: State) -> str:
    p = CRS804
    rows = [
        ("version", state.version),
        ("free-memory", f"{p.free_memory // 2**20}.0MiB"),
        ("total-memory", f"{p.total_memory // 2**20}.0MiB"),
        ("cpu", p.cpu),
        ("cpu-count", str(p.cpu_count)),
        ("architecture-name", p.architecture_name),
        ("board-name", p.board_name),
        ("platform", "MikroTik"),
    ]
    return "\n".join(f"{k:>20}: {v}" for k, v in rows)


def _normalise(line: str) -> list[str]:
    return line.strip().lstrip("/").replace("/", " ").split()


COMMANDS: dict[tuple[str, ...], Callable[[State], str]] = {
    ("export", "terse"): export_terse,
    ("export",): export_terse,
    ("system", "identity", "print"): lambda s: f"  name: {s.identity}",
    ("system", "resource", "print"): _resource,
}
KNOWN_WORDS = {"export", "terse", "system", "identity", "resource", "print", "quit",
               "without-paging", "interface", "ip"}  # fmt: skip


def answer(state: State, line: str) -> str | None:
    """Output for one command line (None: quit)."""
    words = [w for w in _normalise(line) if w != "without-paging"]
    if words in (["quit"], ["exit"]):
        return None
    handler = COMMANDS.get(tuple(words))
    if handler is not None:
        return handler(state)
    stripped = line.strip()
    bad = next((w for w in words if w not in KNOWN_WORDS), words[0] if words else "")
    column = stripped.find(bad) + 1 if bad else 1
    return f"bad command name {bad} (line 1 column {column})"


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


def run_shell(
    state_file: StateFile, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Prompt, read a line, answer, until ``/quit`` or end of input."""
    inp = stdin or sys.stdin
    out = stdout or sys.stdout
    with _terminal(inp) as echo:
        return _loop(state_file, inp, out, echo)


def _loop(state_file: StateFile, inp: TextIO, out: TextIO, echo: bool) -> int:
    while True:
        state = state_file.load()
        out.write(f"[{state.username}@{state.identity}] > ")
        out.flush()
        line = inp.readline()
        if not line:
            return 0
        if echo:
            out.write(line.rstrip("\r\n") + "\n")
        if not line.strip():
            continue
        reply = answer(state, line)
        if reply is None:
            return 0
        out.write(reply + "\n\n")
        out.flush()
