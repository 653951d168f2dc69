"""Nornir task: start one node's rendered launch script, detached, in the launch's run dir."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.launch.state import RUN_ID_VAR
from fabric.remote.shell import RemoteCommandFailed, sh_ok, write_file


@dataclass(frozen=True)
class StartedProcess:
    """The detached process of one node: its pid (= process group and session id), its log."""

    pid: int
    script: str
    log: str


def start_launch_process(task: Task, run_dir: str, script_name: str, script: str,
                         run_id: str) -> Result:
    """Copy `script` into `run_dir` and start it with setsid/nohup (own session, stdin from
    /dev/null, output to `<host>.log`, pid in `<host>.pid`); the pid when it is running."""
    host = task.host.name
    path = f"{run_dir}/{script_name}"
    log, pidfile = f"{run_dir}/{host}.log", f"{run_dir}/{host}.pid"
    if task.is_dry_run():
        return Result(host=task.host, result=f"would start {path}", changed=False)
    sh_ok(task, f"mkdir -p {shlex.quote(run_dir)}")
    write_file(task, path, script, mode="755")
    q_dir, q_pid = shlex.quote(run_dir), shlex.quote(pidfile)
    inner = shlex.quote(f"echo $$ > {pidfile}; exec {path}")
    out = sh_ok(task, (
        f"cd {q_dir} && rm -f {q_pid} && {RUN_ID_VAR}={shlex.quote(run_id)} "
        f"setsid -f nohup bash -c {inner} > {shlex.quote(log)} 2>&1 < /dev/null; "
        f"for _ in $(seq 100); do [ -s {q_pid} ] && break; sleep 0.05; done; cat {q_pid}"))
    pid = out.strip().splitlines()[-1].strip() if out.strip() else ""
    if not pid.isdigit():
        raise RemoteCommandFailed(f"{host}: {path} did not start (no pid file): {out[-300:]}")
    return Result(host=task.host, result=StartedProcess(int(pid), path, log), changed=True)
