"""The one batch protocol: many commands as ONE shell script on one exec channel, each
command's output (stdout and stderr together) and exit status delimited.

Each job runs in a subshell of its own (an `exit` in it ends the job only; stdin closed),
its output going to its own file: a begin marker, the output, a newline and an end marker
with its exit status (the newline keeps the marker on a line of its own after output that
does not end in one; ``split_batch`` takes it off again). When every job is done, one `cat`
prints the files. A job is keyed by its position, or by its name (``batch_script`` given a
mapping name -> command); ``split_batch`` finds each by its key, so the order and anything
before the first marker do not matter.

Modes: parallel (every job at once: the batch takes as long as its slowest job), sequential,
and sequential stopping at the first failing job (the jobs after it do not run and are
missing from the answer). A job's output may itself be a batch (a burst's facts batch):
its keys must differ from the key of the job that holds it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fabric.remote.exec import exec_script, start_script

MARK = "@@fabric-job"
#: What an announcing batch prints once every job is started (outside every job's output).
STARTED = "@@fabric-started"
#: An announcing batch with a `ready` condition looks at it every `READY_POLL_S` seconds, at
#: most `READY_POLLS` times, then announces anyway (a job that never gets ready still ends).
READY_POLL_S = 0.02
READY_POLLS = 50
#: Whether a job of `$fabric_jobs` still runs (has not exited: not a zombie), from /proc.
_ANY_JOB_RUNS = """\
fabric_any_job_runs() { for p in $fabric_jobs; do read -r _ _ st _ 2>/dev/null </proc/$p/stat \
&& [ "$st" != Z ] && return 0; done; return 1; }"""
_BEGIN = re.compile(rf"^{MARK} begin (\S+)$")
_END = re.compile(rf"^{MARK} end (\S+) exit=(\d+)$")
_KEY = re.compile(r"^\S+$")

Jobs = Sequence[str] | Mapping[str, str]


@dataclass(frozen=True)
class JobOutput:
    """What one job printed (stdout and stderr together) and its exit status; `index` is its
    position in the batch, `name` its key when the jobs were named."""

    index: int
    text: str
    exit_code: int | None  # None: the job's output never came back
    name: str = ""


class TranscriptError(ValueError):
    """A batch came back without some of its jobs (the session broke mid-batch)."""


def _keyed(jobs: Jobs) -> list[tuple[str, str]]:
    pairs = list(jobs.items()) if isinstance(jobs, Mapping) else [
        (str(i), cmd) for i, cmd in enumerate(jobs)]
    for key, _ in pairs:
        if not _KEY.match(key):
            raise ValueError(f"a batch job's name must be one word: {key!r}")
    return pairs


#: Set in each job's subshell to that job's own file prefix: a batch (or a script with
#: `temp_dir`) run inside a job keeps its files under it, in the enclosing batch's
#: directory, which the enclosing batch removes (no `mktemp` and no `rm` of its own).
NEST = "fabric_nest"


def temp_dir(name: str) -> str:
    """The shell line that sets `$d`, the prefix of a script's temporary files (a file is
    `"$d"NAME`): inside a job of an enclosing batch, that job's prefix (`NEST`); else a new
    directory named after the script's kind (`fabric-<name>`, so one left behind says whose
    it is) and a slash, or it exits 99. Each `mktemp` and `rm` is a process: about 2 ms of a
    lab Spark's CPU, and a burst of nested batches made four of each."""
    return (f'if [ -n "${{{NEST}:-}}" ]; then d=${NEST}; fabric_own=; '
            f'else d=$(mktemp -d "${{TMPDIR:-/tmp}}/{name}.XXXXXX")/ || exit 99; fabric_own=1; fi')


#: The shell line that removes what `temp_dir` made (nothing where an enclosing batch owns
#: the directory).
REMOVE_TEMP = '[ -z "$fabric_own" ] || rm -rf "$d"'


def _file(i: int) -> str:
    """Job `i`'s output file."""
    return f'"$d"{i:03d}'


def begin_marker(key: str | int) -> str:
    """The shell command that prints job `key`'s begin marker."""
    return f"echo {shlex.quote(f'{MARK} begin {key}')}"


def end_marker(key: str | int, status: str) -> str:
    """The shell command that prints job `key`'s end marker with exit status `status` (a
    shell word: `$?`, `$r1`), after a newline."""
    return f"printf '\\n%s exit=%s\\n' {shlex.quote(f'{MARK} end {key}')} {status}"


def batch_script(jobs: Jobs, parallel: bool = True, stop_on_error: bool = False,
                 prelude: str = "", tmp: str = "fabric-batch", announce: bool = False,
                 ready: str | None = None) -> str:
    """A POSIX sh script that runs `jobs` (in parallel, or one after the other; with
    `stop_on_error`, one after the other up to the first that fails) and prints each output
    delimited. `prelude`: shell run first, in the batch's own shell (exports, renice).
    `announce` (parallel): print `STARTED` once every job has been started; with `ready` (a
    shell condition; `$fabric_jobs` holds the jobs' process ids), once it also holds, looked
    at every `READY_POLL_S` up to `READY_POLLS` times, or once no job runs any more."""
    pairs = _keyed(jobs)
    parallel = parallel and not stop_on_error
    lines = [prelude.rstrip("\n")] if prelude else []
    lines.append(temp_dir(tmp))
    if stop_on_error:
        lines.append("s=0")
    for i, (key, cmd) in enumerate(pairs):
        out = _file(i)
        start = (f"{begin_marker(key)} >{out}; ({NEST}={out}.\n{cmd.rstrip()}\n) >>{out} 2>&1 "
                 f"</dev/null")
        end = f'{end_marker(key, "$r")} >>{out}'
        if parallel:
            lines.append(f"{start} & p{i}=$!")
        elif stop_on_error:
            lines.append(f'[ $s != 0 ] || {{ {start}; r=$?; {end}; [ $r = 0 ] || s=1; }}')
        else:
            lines.append(f"{start}; r=$?; {end}")
    if parallel:
        if announce and ready and pairs:
            jobs = " ".join(f"$p{i}" for i in range(len(pairs)))
            lines += [f'fabric_jobs="{jobs}"; fabric_n=0', _ANY_JOB_RUNS,
                      f"until {ready}; do fabric_any_job_runs || break",
                      f"  [ $fabric_n -ge {READY_POLLS} ] && break; fabric_n=$((fabric_n+1)); "
                      f"sleep {READY_POLL_S:g}; done"]
        if announce:
            lines.append(f"echo '{STARTED}'")
        lines += [f'wait $p{i}; r=$?; {end_marker(key, "$r")} >>{_file(i)}'
                  for i, (key, _) in enumerate(pairs)]
    if pairs:  # its own files only: a nested batch's are printed inside its job's
        lines.append(f"cat {' '.join(_file(i) for i in range(len(pairs)))} 2>/dev/null")
    lines.append(REMOVE_TEMP)
    return "\n".join(lines) + "\n"


def split_batch(output: str, jobs: int | Sequence[str]) -> list[JobOutput]:
    """Per-job outputs of a `batch_script` run, in job order: `jobs` is the count of
    positional jobs or the names of named ones (missing jobs: exit_code None). The newline
    `batch_script` writes before each end marker is not part of the output."""
    keys = [str(i) for i in range(jobs)] if isinstance(jobs, int) else list(jobs)
    found: dict[str, tuple[str, int]] = {}
    current: str | None = None
    buf: list[str] = []
    for line in output.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        begin = _BEGIN.match(line) if current is None else None
        end = _END.match(line) if current is not None else None
        if begin:
            current, buf = begin.group(1), []
        elif end and current is not None and end.group(1) == current:
            if buf and buf[-1] == "":
                buf.pop()
            found[current] = ("\n".join(buf) + ("\n" if buf else ""), int(end.group(2)))
            current = None
        elif current is not None:
            buf.append(line)
    named = not isinstance(jobs, int)
    outputs = []
    for i, key in enumerate(keys):
        text, code = found.get(key, ("", None))
        outputs.append(JobOutput(i, text, code, key if named else ""))
    return outputs


def exec_batch(connection: Any, jobs: Jobs, timeout: float, parallel: bool = True,
               login: bool = False, prelude: str = "",
               on_started: Callable[[], None] | None = None,
               ready: str | None = None) -> list[JobOutput]:
    """Run `jobs` as one batch on an exec channel of the host's session (`login`: in the
    login environment); their outputs in job order. Raises `ScriptTimeout` when the batch
    has not finished within `timeout` seconds. `on_started()` is called once the host
    has started every job (parallel: the batch announces it, `STARTED`; with `ready`, once
    that shell condition holds too, see `batch_script`), before the rest of its output is
    awaited."""
    if not jobs:
        return []
    script = batch_script(jobs, parallel=parallel, prelude=prelude,
                          announce=on_started is not None and parallel, ready=ready)
    if on_started is None:
        _, out = exec_script(connection, script, timeout, login=login)
    else:
        running = start_script(connection, script, timeout, login=login)
        running.read_until(STARTED.encode())
        on_started()
        _, out = running.wait()
    return split_batch(out, list(jobs) if isinstance(jobs, Mapping) else len(jobs))


def require_all(outputs: Sequence[JobOutput]) -> list[JobOutput]:
    """`outputs`, or TranscriptError naming the jobs that never came back."""
    lost = [o.name or str(o.index) for o in outputs if o.exit_code is None]
    if lost:
        raise TranscriptError(f"the batch did not finish: no output from {', '.join(lost)}")
    return list(outputs)
