"""Shell and RouterOS API helpers shared by the push and backup tasks."""

from __future__ import annotations

import base64
import shlex
from typing import Any

from nornir.core.task import Task

from fabric.remote.batch import batch_script, split_batch
from fabric.remote.exec import exec_script
from fabric.remote.exec import spark_session as session


class RemoteCommandFailed(RuntimeError):
    """A command on a host exited non-zero; the message carries its output."""


def sh(task: Task, command: str, timeout: float = 30.0, stdin: bytes = b"") -> tuple[int, str]:
    """Run `command` on the host over its SSH session, in its login environment; (exit
    status, output without leading or trailing newlines)."""
    rc, out = exec_script(session(task), command, timeout, stdin=stdin, login=True)
    return rc, out.strip("\r\n")


def sh_ok(task: Task, command: str, timeout: float = 30.0, stdin: bytes = b"") -> str:
    """Run `command`; RemoteCommandFailed unless it exits 0."""
    rc, out = sh(task, command, timeout, stdin)
    if rc != 0:
        raise RemoteCommandFailed(f"{task.host.name}: `{command}` exited {rc}: {out[-500:]}")
    return out


def _write_from(source: str, path: str, mode: str) -> str:
    tmp = shlex.quote(path + ".fabric-tmp")
    folder = shlex.quote(path.rsplit("/", 1)[0] or "/")
    return (f"mkdir -p {folder} && {source} > {tmp} && chmod {mode} {tmp} "
            f"&& mv -f {tmp} {shlex.quote(path)}")


def write_command(path: str, content: str, mode: str = "600") -> str:
    """A command that writes `content` to `path` atomically (temp file + mv), base64 inside
    (for batching with other steps in `sh_steps`)."""
    blob = base64.b64encode(content.encode()).decode()
    return _write_from(f"printf %s {blob} | base64 -d", path, mode)


def write_file(task: Task, path: str, content: str, mode: str = "600") -> None:
    """Write `content` to `path` atomically (temp file + mv); the content goes over stdin."""
    sh_ok(task, _write_from("cat", path, mode), stdin=content.encode())


def as_root(script: str) -> str:
    """`script` run as root: directly when the login is root, else through `sudo -n` (never
    a password prompt: where sudo wants one, it fails with sudo's own message)."""
    quoted = shlex.quote(script)
    return (f'if [ "$(id -u)" = 0 ]; then sh -c {quoted}; '
            f"else sudo -n sh -c {quoted}; fi")


def remove_command(path: str) -> str:
    """A command that removes `path` (absent already: nothing to do)."""
    return f"rm -f {shlex.quote(path)}"


def sh_steps(task: Task, steps: list[str], stop_on_error: bool = False,
             timeout: float = 60.0, root: bool = False) -> list[tuple[int, str]]:
    """Run `steps` in order as ONE batch (one round trip); (exit status, output without
    trailing newlines) of each.

    Every step runs unless `stop_on_error`, where the first failure ends the batch (the steps
    after it are missing from the answer). `root`: the batch runs as root (`as_root`).
    """
    if not steps:
        return []
    script = batch_script(steps, parallel=False, stop_on_error=stop_on_error)
    out = sh_ok(task, as_root(script) if root else script, timeout=timeout)
    return [(job.exit_code, job.text.rstrip("\n")) for job in split_batch(out, len(steps))
            if job.exit_code is not None]


def routeros(task: Task) -> Any:
    """The logged-in `RouterOsApi` of the switch (connection plugin `routeros_api`)."""
    conn = task.host.get_connection("routeros_api", task.nornir.config)
    return conn.get_api() if hasattr(conn, "get_api") else conn


def ros_rows(api: Any, path: str) -> list[dict[str, str]]:
    """All rows of a RouterOS menu; `.id` is kept as `id`."""
    return [{str(k): str(v) for k, v in dict(r).items()} for r in api.get_resource(path).get()]


def ros_call(api: Any, path: str, action: str, args: dict[str, str]) -> str | None:
    """One API call (`set`, `add`, `remove`); the `ret` of an `add`, if any."""
    resource = api.get_resource(path)
    if action == "add":
        reply = resource.call("add", args)
        done = getattr(reply, "done_message", {}) or {}
        ret = done.get("ret")
        return ret.decode() if isinstance(ret, bytes) else ret
    resource.call(action, args)
    return None
