"""Nornir task: stop one node's launch: its containers, its Ray daemons (vLLM), then its
process and everything in its session."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.launch.state import RUN_ID_VAR, RUN_LABEL
from fabric.remote.shell import RemoteCommandFailed, sh_ok

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class StoppedProcess:
    """What was stopped: the pids signalled, the containers stopped (empty when nothing of
    the launch was running) and what `ray stop` said (empty when not asked for)."""

    killed: tuple[int, ...]
    containers: tuple[str, ...] = ()
    ray: str = ""


def _ours(pid: int, run_id: str) -> str:
    """Shell function listing the processes of session `pid` that carry the run id."""
    return (f"ours() {{ for p in $(pgrep -s {pid}); do tr '\\0' '\\n' < /proc/$p/environ "
            f"2>/dev/null | grep -qx '{RUN_ID_VAR}={run_id}' && echo $p; done; }}")


def _containers(names: Sequence[str], run_id: str, ray: bool, grace_s: float) -> str:
    """Stop each named container that carries this run's label (`docker exec … ray stop`
    first for vLLM); report @@CONTAINER NAME per stopped one, fail if one survives."""
    steps = []
    for name in names:
        flt = (f"--filter name=^{name}$ --filter label={RUN_LABEL}={run_id}")
        ray_stop = (f"docker exec {name} ray stop >/dev/null 2>&1 || true; " if ray else "")
        steps.append(
            f"ids=$(docker ps -q {flt}) || {{ echo \"@@DOCKER-FAILED {name}\"; exit 3; }}; "
            f"if [ -n \"$ids\" ]; then {ray_stop}"
            f"docker stop -t {int(grace_s)} $ids >/dev/null; echo \"@@CONTAINER {name}\"; fi; "
            f"left=$(docker ps -q {flt}); if [ -n \"$left\" ]; then docker kill $left "
            f">/dev/null 2>&1; sleep 1; [ -n \"$(docker ps -q {flt})\" ] && "
            f"{{ echo \"@@CONTAINER-LEFT {name}\"; exit 3; }}; fi; ")
    return "".join(steps)


_RAY = ("if command -v ray >/dev/null 2>&1; then ray stop >/dev/null 2>&1 "
        "&& echo '@@RAY stopped' || echo '@@RAY ray stop failed'; "
        "else echo '@@RAY not on PATH: nothing to stop'; fi; ")


def stop_launch_process(task: Task, pid: int, run_id: str, grace_s: float = 20.0,
                        containers: Sequence[str] = (), ray: bool = False,
                        env: Mapping[str, str] | None = None) -> Result:
    """Stop this node's launch: its `containers` (only those labelled with the run id), its
    Ray daemons when `ray` (bare vLLM: `ray stop`; in a container: `docker exec … ray stop`),
    then SIGTERM the session of `pid` (only processes carrying the run id), SIGKILL what is
    left after `grace_s`, and verify none remain. `env`: the launch's `--env` pairs, so
    `docker`/`ray` are the ones the launch used. Idempotent: nothing running is no change."""
    if not run_id.replace("-", "").isalnum():
        raise ValueError(f"bad run id {run_id!r}")
    bad = [n for n in containers if not _NAME.fullmatch(n)]
    if bad:
        raise ValueError(f"bad container name(s) {bad!r}")
    if task.is_dry_run():
        return Result(host=task.host, result=StoppedProcess(()), changed=False)
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in sorted((env or {}).items())
                      if k.isidentifier())
    steps = int(grace_s / 0.2)
    out = sh_ok(task, (
        exports + _containers(containers, run_id, ray, grace_s)
        + (_RAY if ray and not containers else "")
        + f"{_ours(pid, run_id)}; first=$(ours | tr '\\n' ' '); echo \"@@FOUND $first\"; "
        f"[ -n \"$first\" ] && kill -TERM $first 2>/dev/null; "
        f"for _ in $(seq {steps}); do [ -z \"$(ours)\" ] && break; sleep 0.2; done; "
        f"left=$(ours | tr '\\n' ' '); [ -n \"$left\" ] && kill -KILL $left 2>/dev/null; "
        f"for _ in $(seq 25); do [ -z \"$(ours)\" ] && break; sleep 0.2; done; "
        f"echo \"@@LEFT $(ours | tr '\\n' ' ')\""), timeout=grace_s * (2 + len(containers)) + 30)
    found = _pids(out, "@@FOUND")
    left = _pids(out, "@@LEFT")
    if left:
        raise RemoteCommandFailed(f"{task.host.name}: still running after SIGKILL: "
                                  f"{' '.join(map(str, left))}")
    stopped = tuple(line.split(" ", 1)[1].strip() for line in out.splitlines()
                    if line.startswith("@@CONTAINER "))
    ray_said = next((line[len("@@RAY "):].strip() for line in out.splitlines()
                     if line.startswith("@@RAY ")), "")
    if ray and containers:
        ray_said = "stopped in the container" if stopped else "nothing running"
    return Result(host=task.host, result=StoppedProcess(found, stopped, ray_said),
                  changed=bool(found or stopped or ray_said == "stopped"))


def _pids(out: str, marker: str) -> tuple[int, ...]:
    for line in out.splitlines():
        if line.startswith(marker):
            return tuple(int(p) for p in line[len(marker):].split() if p.isdigit())
    return ()
