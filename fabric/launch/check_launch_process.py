"""Nornir task: is a node's launch process still running, and the tail of its log."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.remote.shell import sh


@dataclass(frozen=True)
class ProcessState:
    """Whether the launch's session leader runs (not a zombie), and the log's last lines."""

    alive: bool
    log_tail: str


def check_launch_process(task: Task, pid: int, log: str, lines: int = 20) -> Result:
    """Read the state of `pid` and the last `lines` of `log`; changes nothing."""
    _rc, out = sh(task, (
        f"st=$(ps -o stat= -p {pid} 2>/dev/null); "
        f"case \"$st\" in ''|Z*) echo @@DEAD;; *) echo @@ALIVE;; esac; "
        f"tail -n {lines} {shlex.quote(log)} 2>&1"))
    first, _, tail = out.partition("\n")
    return Result(host=task.host, result=ProcessState(first.strip() == "@@ALIVE",
                                                      tail.rstrip()), changed=False)
