"""Nornir task: stop one node's launch process and everything in its session."""

from __future__ import annotations

from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.launch.state import RUN_ID_VAR
from fabric.tasks.push_shell import RemoteCommandFailed, sh_ok


@dataclass(frozen=True)
class StoppedProcess:
    """The pids that were signalled (empty when nothing of the launch was running)."""

    killed: tuple[int, ...]


def _ours(pid: int, run_id: str) -> str:
    """Shell function listing the processes of session `pid` that carry the run id."""
    return (f"ours() {{ for p in $(pgrep -s {pid}); do tr '\\0' '\\n' < /proc/$p/environ "
            f"2>/dev/null | grep -qx '{RUN_ID_VAR}={run_id}' && echo $p; done; }}")


def stop_launch_process(task: Task, pid: int, run_id: str, grace_s: float = 20.0) -> Result:
    """SIGTERM the session of `pid` (only processes carrying the run id), SIGKILL what is
    left after `grace_s`, and verify none remain. Idempotent: nothing running is no change."""
    if not run_id.replace("-", "").isalnum():
        raise ValueError(f"bad run id {run_id!r}")
    if task.is_dry_run():
        return Result(host=task.host, result=StoppedProcess(()), changed=False)
    steps = int(grace_s / 0.2)
    out = sh_ok(task, (
        f"{_ours(pid, run_id)}; first=$(ours | tr '\\n' ' '); echo \"@@FOUND $first\"; "
        f"[ -n \"$first\" ] && kill -TERM $first 2>/dev/null; "
        f"for _ in $(seq {steps}); do [ -z \"$(ours)\" ] && break; sleep 0.2; done; "
        f"left=$(ours | tr '\\n' ' '); [ -n \"$left\" ] && kill -KILL $left 2>/dev/null; "
        f"for _ in $(seq 25); do [ -z \"$(ours)\" ] && break; sleep 0.2; done; "
        f"echo \"@@LEFT $(ours | tr '\\n' ' ')\""), timeout=grace_s + 30)
    found = _pids(out, "@@FOUND")
    left = _pids(out, "@@LEFT")
    if left:
        raise RemoteCommandFailed(f"{task.host.name}: still running after SIGKILL: "
                                  f"{' '.join(map(str, left))}")
    return Result(host=task.host, result=StoppedProcess(found), changed=bool(found))


def _pids(out: str, marker: str) -> tuple[int, ...]:
    for line in out.splitlines():
        if line.startswith(marker):
            return tuple(int(p) for p in line[len(marker):].split() if p.isdigit())
    return ()
