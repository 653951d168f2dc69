"""Start measurement servers in the background on a free port each, and wait until they
listen; the script prints ``@@port <key> <port>`` per server (``@@port <key> -`` on failure).

The listening ports are listed once (`ss`), each server gets the next port not in the list
and all start at once; then the script waits (bounded, polled every `POLL_S`) until every
server listens or has exited. A server that prints a line once it listens (`Server.says`:
iperf3's "Server listening on", flushed by `--forceflush`) is watched through its own output,
in a file of the script's temporary directory; the others through `ss` again. Each `ss` look
costs the kernel a walk of its whole listening hash (about 7 ms of system CPU on the lab's
machine, every look); a look at a file costs one `grep`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from fabric.remote.batch import temp_dir

_PORT = re.compile(r"^@@port (\S+) (\d+|-)\s*$", re.M)

#: Seconds between two looks at the listening ports, and the most looks. The first
#: `QUICK_LOOKS` come `QUICK_S` apart: an idle host's server listens within a few ms, and a
#: validation's first stage waits for this script.
POLL_S = 0.05
POLLS = 100
QUICK_S = 0.01
QUICK_LOOKS = 3

_PRELUDE = """\
listening() { echo " $(ss -Hltn | awk '{n=split($4, a, ":"); printf "%s ", a[n]}') "; }
used=$(listening)
"""


@dataclass(frozen=True)
class Server:
    """One server to start: `command` has ``{port}`` where the chosen port goes."""

    key: str
    command: str
    life_s: float
    says: str | None = None  # what it prints once it listens (its output must be flushed)


def start_servers_script(servers: Sequence[Server], base_port: int) -> str:
    """Script that starts each server on the next free port from `base_port` up (all at
    once), waits until each listens (or has exited: it never will) and prints its port."""
    watched = all(s.says for s in servers)  # no `ss` look after the first
    lines = [_PRELUDE, f"p={base_port}"]
    if watched:
        lines.append(temp_dir("fabric-servers"))
    for i, s in enumerate(servers):
        cmd = s.command.replace("{port}", "$p")
        out = f'"$d/{i}"' if watched else "/dev/null"
        lines += [
            'while case "$used" in *" $p "*) true;; *) false;; esac; do p=$((p+1)); done',
            f"setsid timeout {s.life_s:g} {cmd} >{out} 2>&1 </dev/null &",
            f"s{i}=$p; k{i}=$!; ok{i}=; p=$((p+1))",
        ]
    look = "w=0" if watched else "now=$(listening); w=0"
    lines.append(f"i=0; while :; do case $i in [0-{QUICK_LOOKS - 1}]) sleep {QUICK_S:g};; "
                 f"*) sleep {POLL_S:g};; esac; {look}")
    for i, s in enumerate(servers):
        if watched:
            listens = f"grep -qsF {shlex.quote(str(s.says))} \"$d/{i}\""
        else:
            listens = f'case "$now" in *" $s{i} "*) true;; *) false;; esac'
        lines.append(f'  [ -n "$ok{i}" ] || if {listens}; then ok{i}=1; '
                     f'else ! kill -0 $k{i} 2>/dev/null || w=1; fi')
    lines.append(f"  [ $w = 0 ] && break; i=$((i+1)); [ $i -ge {POLLS} ] && break; done")
    if watched:  # the servers keep their open files; the names go
        lines.append('rm -rf "$d"')
    for i, s in enumerate(servers):
        lines.append(f'if [ -n "$ok{i}" ]; then echo "@@port {s.key} $s{i}"; '
                     f'else echo "@@port {s.key} -"; fi')
    return "\n".join(lines) + "\n"


def parse_ports(output: str) -> dict[str, int | None]:
    """Port per server key (None: it never listened)."""
    return {m.group(1): None if m.group(2) == "-" else int(m.group(2))
            for m in _PORT.finditer(output)}
