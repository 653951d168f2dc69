"""Shell and RouterOS API helpers shared by the push and backup tasks."""

from __future__ import annotations

import base64
import re
import secrets
import shlex
from typing import Any

from nornir.core.task import Task


class RemoteCommandFailed(RuntimeError):
    """A command on a host exited non-zero; the message carries its output."""


def netmiko(task: Task) -> Any:
    return task.host.get_connection("netmiko", task.nornir.config)


def sh(task: Task, command: str, timeout: float = 30.0) -> tuple[int, str]:
    """Run `command` on the host over its Netmiko session; (exit status, output)."""
    conn = netmiko(task)
    tag = secrets.token_hex(4)
    out: str = conn.send_command(
        f"echo @@BEGIN-{tag}; {command}; echo @@RC-{tag} $?", expect_string=rf"@@RC-{tag} \d+",
        cmd_verify=False, read_timeout=timeout, strip_prompt=False, strip_command=False)
    begin = re.search(rf"^@@BEGIN-{tag}\s*$", out, re.MULTILINE)
    end = re.search(rf"@@RC-{tag} (\d+)", out)
    if begin is None or end is None:
        raise RemoteCommandFailed(f"{task.host.name}: no exit status from {command!r}: "
                                  f"{out[-300:]!r}")
    return int(end.group(1)), out[begin.end():end.start()].strip("\r\n")


def sh_ok(task: Task, command: str, timeout: float = 30.0) -> str:
    """Run `command`; RemoteCommandFailed unless it exits 0."""
    rc, out = sh(task, command, timeout)
    if rc != 0:
        raise RemoteCommandFailed(f"{task.host.name}: `{command}` exited {rc}: {out[-500:]}")
    return out


def write_command(path: str, content: str, mode: str = "600") -> str:
    """A command that writes `content` to `path` atomically (temp file + mv), base64 inside."""
    blob = base64.b64encode(content.encode()).decode()
    tmp = shlex.quote(path + ".fabric-tmp")
    folder = shlex.quote(path.rsplit("/", 1)[0] or "/")
    return (f"mkdir -p {folder} && printf %s {blob} | base64 -d > {tmp} && chmod {mode} {tmp} "
            f"&& mv -f {tmp} {shlex.quote(path)}")


def write_file(task: Task, path: str, content: str, mode: str = "600") -> None:
    """Write `content` to `path` atomically (temp file + mv), base64 over the wire."""
    sh_ok(task, write_command(path, content, mode))


def sh_steps(task: Task, steps: list[str], stop_on_error: bool = False,
             timeout: float = 60.0) -> list[tuple[int, str]]:
    """Run `steps` in order as ONE command (one round trip); (exit status, output) of each.

    Every step runs unless `stop_on_error`, where the first failure ends the batch (the steps
    after it are missing from the answer). Runs in a subshell: nothing leaks into the session.
    """
    if not steps:
        return []
    tag = secrets.token_hex(4)
    stop = "[ $r -eq 0 ] || exit 0; " if stop_on_error else ""
    body = "".join(f"o=$({{ {cmd}; }} 2>&1); r=$?; "
                   f"echo \"@@S-{tag} {n} $r $(printf %s \"$o\" | base64 -w0)\"; {stop}"
                   for n, cmd in enumerate(steps))
    out = sh_ok(task, f"( {body})", timeout=timeout)
    got: dict[int, tuple[int, str]] = {}
    for m in re.finditer(rf"^@@S-{tag} (\d+) (\d+) ?(\S*)\s*$", out, re.MULTILINE):
        got[int(m.group(1))] = (int(m.group(2)), base64.b64decode(m.group(3)).decode(
            errors="replace"))
    return [got[n] for n in range(len(steps)) if n in got]


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
