"""Many commands as ONE shell script: run in parallel on the host, outputs delimited.

Each job writes to its own file (parallel output would interleave): a begin marker, its
output (stdout and stderr together), a newline and an end marker with its exit status (the
newline keeps the marker on a line of its own after output that does not end in one;
``split_batch`` takes it off again). When every job is done, one `cat` prints the files (in
any order: ``split_batch`` finds each job by its index). No process is spent per job beyond
the job itself. A job must not `exit` the shell: its end marker would never be written.
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
        end = f'printf "\\n{MARK} end {i} exit=%s\\n" $?'
        lines.append(f'{{ echo "{MARK} begin {i}"; {cmd} ; {end}; }} >"$d/{i}" 2>&1 </dev/null{bg}')
    lines.append("wait")
    if jobs:
        lines.append('cat "$d"/*')
    lines.append('rm -rf "$d"')
    return "\n".join(lines) + "\n"


def split_batch(output: str, count: int) -> list[JobOutput]:
    """Per-job outputs of a `batch_script` run, in job order (missing jobs: exit_code None).
    The newline `batch_script` writes before each end marker is not part of the output."""
    found: dict[int, JobOutput] = {}
    current: int | None = None
    buf: list[str] = []
    for line in output.splitlines():
        begin = _BEGIN.match(line)
        end = _END.match(line)
        if begin:
            current, buf = int(begin.group(1)), []
        elif end and current is not None and int(end.group(1)) == current:
            if buf and buf[-1] == "":
                buf.pop()
            text = "\n".join(buf) + ("\n" if buf else "")
            found[current] = JobOutput(current, text, int(end.group(2)))
            current = None
        elif current is not None:
            buf.append(line)
    return [found.get(i, JobOutput(i, "", None)) for i in range(count)]
