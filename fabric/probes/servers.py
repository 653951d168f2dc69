"""Start measurement servers in the background on a free port each, and wait until they
listen; the script prints ``@@port <key> <port>`` per server (``@@port <key> -`` on failure).

A server that prints a line once it listens (`Server.says`: iperf3's "Server listening on",
flushed by `--forceflush`) is watched through its own output, in a file of the script's
temporary directory, read by the shell itself (no `grep` per look); the others through `ss`.
A server that also says when its port is taken (`Server.busy`: "Address already in use")
is started on `base_port` without a look at the listening ports; only once one says its port
is taken are they listed (`ss`, once), and it starts again on the next port not listed (each
server at most `TRIES` times). Otherwise the listening ports are listed first and each server
gets the next port not in the list. All start at once; the script then waits (bounded, polled
every `POLL_S`, and every `QUICK_S` just after a start) until every server listens or has
exited. Each `ss` look costs the kernel a walk of its whole listening hash (about 7 ms of
system CPU on the lab's machine, where the hash holds every Spark's sockets; with the `awk`
that reads it about 10 ms a Spark). Trying the ports one by one instead took about 0.05 s a
taken port (20 taken: 0.97 s against 0.025 s with one look).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from fabric.remote.batch import REMOVE_TEMP, temp_dir

_PORT = re.compile(r"^@@port (\S+) (\d+|-)\s*$", re.M)

#: Seconds between two looks at the listening ports, and the most looks. The first
#: `QUICK_LOOKS` come `QUICK_S` apart: an idle host's server listens within a few ms, and a
#: validation's first stage waits for this script.
POLL_S = 0.05
POLLS = 100
QUICK_S = 0.01
QUICK_LOOKS = 3
#: How many ports one server tries, one after the other, while it finds each taken.
TRIES = 32

_LISTENING = """\
listening() { echo " $(ss -Hltn | awk '{n=split($4, a, ":"); printf "%s ", a[n]}') "; }"""
_NEXT_FREE = 'while case "$used" in *" $p "*) true;; *) false;; esac; do p=$((p+1)); done'


#: `fabric_says TEXT FILE`: whether a line of FILE holds TEXT, read by the shell's own `read`
#: (a missing file holds nothing).
_SAYS = """\
fabric_says() { { while IFS= read -r l; do case $l in *"$1"*) return 0;; esac; done <"$2"; } \
2>/dev/null; return 1; }
"""


@dataclass(frozen=True)
class Server:
    """One server to start: `command` has ``{port}`` where the chosen port goes."""

    key: str
    command: str
    life_s: float
    says: str | None = None  # what it prints once it listens (its output must be flushed)
    busy: str | None = None  # what it prints, then exits, when its port is taken


def start_servers_script(servers: Sequence[Server], base_port: int) -> str:
    """Script that starts each server on the next free port from `base_port` up (all at
    once), waits until each listens (or has exited: it never will) and prints its port."""
    watched = all(s.says for s in servers)  # no `ss` look after the first
    retried = watched and all(s.busy for s in servers)  # a look only once a port is taken
    lines = [_LISTENING, "used=; listed=" if retried else "used=$(listening)"]
    if watched:  # their words in English whatever the login's locale (strerror's too)
        lines += ["export LC_ALL=C", _SAYS, temp_dir("fabric-servers")]
    lines.append(f"p={base_port}")
    starts = []
    for i, s in enumerate(servers):
        cmd = s.command.replace("{port}", "$p")
        out = f'"$d"{i}' if watched else "/dev/null"
        starts.append(f"{_NEXT_FREE}\n  setsid timeout {s.life_s:g} {cmd} >{out} 2>&1 "
                      f"</dev/null &\n  s{i}=$p; k{i}=$!; p=$((p+1))")
        lines += [starts[i], f"ok{i}=; t{i}=1"]
    look = "w=0" if watched else "now=$(listening); w=0"
    lines.append(f"i=0; q=0; while :; do case $q in [0-{QUICK_LOOKS - 1}]) sleep {QUICK_S:g};; "
                 f"*) sleep {POLL_S:g};; esac; q=$((q+1)); {look}")
    for i, s in enumerate(servers):
        if watched:
            listens = f'fabric_says {shlex.quote(str(s.says))} "$d"{i}'
        else:
            listens = f'case "$now" in *" $s{i} "*) true;; *) false;; esac'
        line = (f'  [ -n "$ok{i}" ] || if {listens}; then ok{i}=1; '
                f'elif kill -0 $k{i} 2>/dev/null; then w=1')
        if retried:  # its port was taken: list the ports (once) and take the next free one
            line += (f'; elif [ $t{i} -lt {TRIES} ] && fabric_says '
                     f'{shlex.quote(str(s.busy))} "$d"{i}; then\n'
                     f'  [ -n "$listed" ] || {{ used=$(listening); listed=1; }}\n  {starts[i]}; '
                     f't{i}=$((t{i}+1)); q=0; w=1')
        lines.append(line + "; fi")
    lines.append(f"  [ $w = 0 ] && break; i=$((i+1)); [ $i -ge {POLLS} ] && break; done")
    if watched:  # the servers keep their open files; the names go
        lines.append(REMOVE_TEMP)
    for i, s in enumerate(servers):
        lines.append(f'if [ -n "$ok{i}" ]; then echo "@@port {s.key} $s{i}"; '
                     f'else echo "@@port {s.key} -"; fi')
    return "\n".join(lines) + "\n"


def parse_ports(output: str) -> dict[str, int | None]:
    """Port per server key (None: it never listened)."""
    return {m.group(1): None if m.group(2) == "-" else int(m.group(2))
            for m in _PORT.finditer(output)}
