"""Many commands as ONE shell script: run in parallel on the host, outputs delimited.

Each job writes to its own file (parallel output would interleave), then the files are printed
between markers, each followed by the job's exit status. ``split_batch`` undoes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MARK = "@@fabric-job"
_BEGIN = re.compile(rf"^{MARK} begin (\d+)$")
_END = re.compile(rf"^{MARK} end (\d+) exit=(\d+)$")


@dataclass(frozen=True)
class JobOutput:
    """What one job printed (stdout and stderr together) and its exit status."""

    index: int
    text: str
    exit_code: int | None  # None: the job's output never came back


def batch_script(jobs: Sequence[str], parallel: bool = True) -> str:
    """A POSIX sh script that runs `jobs` in parallel (or one after the other) and prints
    each output delimited."""
    lines = ['d=$(mktemp -d /tmp/fabric-batch.XXXXXX) || exit 99']
    bg = " &" if parallel else ""
    for i, cmd in enumerate(jobs):
        lines.append(f'{{ {cmd} ; echo $? >"$d/{i}.rc"; }} >"$d/{i}.out" 2>&1 </dev/null{bg}')
    lines.append("wait")
    for i in range(len(jobs)):
        lines.append(f'echo "{MARK} begin {i}"; cat "$d/{i}.out"; '
                     f'echo "{MARK} end {i} exit=$(cat "$d/{i}.rc" 2>/dev/null || echo 255)"')
    lines.append('rm -rf "$d"')
    return "\n".join(lines) + "\n"


def split_batch(output: str, count: int) -> list[JobOutput]:
    """Per-job outputs of a `batch_script` run, in job order (missing jobs: exit_code None)."""
    found: dict[int, JobOutput] = {}
    current: int | None = None
    buf: list[str] = []
    for line in output.splitlines():
        begin = _BEGIN.match(line)
        end = _END.match(line)
        if begin:
            current, buf = int(begin.group(1)), []
        elif end and current is not None and int(end.group(1)) == current:
            text = "\n".join(buf) + ("\n" if buf else "")
            found[current] = JobOutput(current, text, int(end.group(2)))
            current = None
        elif current is not None:
            buf.append(line)
    return [found.get(i, JobOutput(i, "", None)) for i in range(count)]
