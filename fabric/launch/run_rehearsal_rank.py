"""Nornir task: run one rank of the launch rehearsal on a node, with the launch's env."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.remote.shell import sh, write_file

REMOTE_SCRIPT = "/tmp/fabric-rehearse.py"


@dataclass(frozen=True)
class RankRun:
    """One rank's output (stdout and stderr together) and exit status."""

    output: str
    exit_code: int


def run_rehearsal_rank(task: Task, script: str, env: dict[str, str], python: str,
                       args: list[str], timeout: float) -> Result:
    """Copy the rehearsal script over the host's SSH session and run it as one rank.

    Result: a `RankRun`; `failed` when the rank exits non-zero (e.g. ranks cannot meet).
    """
    write_file(task, REMOTE_SCRIPT, script, mode="644")
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    unset = "unset NCCL_IB_GID_INDEX; " if "NCCL_IB_GID_INDEX" not in env else ""
    command = (f"{unset}env PYTHONWARNINGS=ignore {exports} timeout {int(timeout) + 30} "
               f"{shlex.quote(python)} {REMOTE_SCRIPT} {shlex.join(args)} 2>&1")
    rc, out = sh(task, command, timeout=timeout + 60)
    return Result(host=task.host, result=RankRun(out, rc), failed=rc != 0, changed=False)
