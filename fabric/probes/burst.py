"""Several scripts at once on one Spark, in ONE exec channel of the host's one SSH session.

A wrapper script starts every script but the first in the background (each in a subshell,
output to its own file), runs the first one and, once all are done, prints each output
between markers with its exit status. So the scripts run side by side on the host (the facts
batch, the ping burst, the bandwidth servers' start-up, the nccl-tests search) and the burst
takes as long as its slowest script, for one channel's round trips.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabric.remote.exec import LOGIN_ENV, exec_script

MARK = "@@fabric-burst"
_BEGIN = re.compile(rf"^{MARK} begin (\d+)$")
_END = re.compile(rf"^{MARK} end (\d+) rc=(\d+)$")


@dataclass(frozen=True)
class Script:
    """One script of a burst: `login` runs it in the login environment (`LOGIN_ENV`);
    `timeout_s` counts from the start; `read` turns its output into its result
    (`ScriptOutput.value`) as soon as the burst is back, in the host's own task."""

    name: str
    text: str
    timeout_s: float
    login: bool = False
    read: Callable[[str], Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ScriptOutput:
    """What one script of a burst printed (stdout and stderr together), its exit status
    (None: its output never came back) and what its `read` made of it."""

    name: str
    rc: int | None
    output: str
    value: Any = None


def burst_script(scripts: Sequence[Script]) -> str:
    """The wrapper that runs `scripts` side by side (the first in the foreground), each in
    its own subshell (in the login environment where it asks)."""
    def env(script: Script) -> str:
        return LOGIN_ENV if script.login else ""

    lines = ['d=$(mktemp -d "${TMPDIR:-/tmp}/fabric-burst.XXXXXX") || exit 99']
    for i, script in enumerate(scripts[1:], start=1):
        lines.append(f'(\n{env(script)}{script.text.rstrip()}\n) >"$d/{i}" 2>&1 </dev/null '
                     f'& p{i}=$!')
    if scripts:
        lines.append(f'(\n{env(scripts[0])}{scripts[0].text.rstrip()}\n) >"$d/0" 2>&1 '
                     '</dev/null; r0=$?')
    for i in range(1, len(scripts)):
        lines.append(f"wait $p{i}; r{i}=$?")
    for i in range(len(scripts)):
        lines.append(f'echo "{MARK} begin {i}"; cat "$d/{i}"; '
                     f'printf "\\n{MARK} end {i} rc=%s\\n" $r{i}')
    lines.append('rm -rf "$d"')
    return "\n".join(lines) + "\n"


def split_burst(scripts: Sequence[Script], output: str) -> list[ScriptOutput]:
    """Each script's output and exit status from the wrapper's output, in `scripts` order
    (the newline before each end marker is not part of the output)."""
    found: dict[int, tuple[int, str]] = {}
    current: int | None = None
    body: list[str] = []
    for line in output.splitlines():
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin:
            current, body = int(begin.group(1)), []
        elif end and current is not None and int(end.group(1)) == current:
            if body and body[-1] == "":
                body.pop()
            found[current] = (int(end.group(2)), "\n".join(body) + ("\n" if body else ""))
            current = None
        elif current is not None:
            body.append(line)
    outs = [ScriptOutput(s.name, *found.get(i, (None, ""))) for i, s in enumerate(scripts)]
    return [ScriptOutput(o.name, o.rc, o.output, s.read(o.output)) if s.read is not None else o
            for s, o in zip(scripts, outs, strict=True)]


def exec_burst(connection: Any, scripts: Sequence[Script]) -> list[ScriptOutput]:
    """Run `scripts` side by side on the host, in one exec channel; their outputs in order.

    Raises netmiko's ReadTimeout when the burst has not finished within the longest timeout.
    """
    if not scripts:
        return []
    timeout = max(s.timeout_s for s in scripts)
    _, out = exec_script(connection, burst_script(scripts), timeout)
    return split_burst(scripts, out)

