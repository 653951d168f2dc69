"""Start measurement servers in the background on a free port each, and wait until they
listen; the script prints ``@@port <key> <port>`` per server (``@@port <key> -`` on failure)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_PORT = re.compile(r"^@@port (\S+) (\d+|-)\s*$", re.M)

_PRELUDE = """\
busy() { ss -Hltn "sport = :$1" | grep -q . ; }
listening() { i=0; until busy "$1"; do i=$((i+1)); [ $i -gt 100 ] && return 1; sleep 0.05; done; }
"""


@dataclass(frozen=True)
class Server:
    """One server to start: `command` has ``{port}`` where the chosen port goes."""

    key: str
    command: str
    life_s: float


def start_servers_script(servers: Sequence[Server], base_port: int) -> str:
    """Script that starts each server on the first free port from `base_port` up."""
    lines = [_PRELUDE, f"p={base_port}"]
    for s in servers:
        cmd = s.command.replace("{port}", "$p")
        lines += [
            'while busy "$p"; do p=$((p+1)); done',
            f"setsid timeout {s.life_s:g} {cmd} >/dev/null 2>&1 </dev/null &",
            f'if listening "$p"; then echo "@@port {s.key} $p"; else echo "@@port {s.key} -"; fi',
            "p=$((p+1))",
        ]
    return "\n".join(lines) + "\n"


def parse_ports(output: str) -> dict[str, int | None]:
    """Port per server key (None: it never listened)."""
    return {m.group(1): None if m.group(2) == "-" else int(m.group(2))
            for m in _PORT.finditer(output)}
