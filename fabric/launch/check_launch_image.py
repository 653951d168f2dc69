"""Nornir task: which of the engine's Python modules a node's image (or python3) lacks."""

from __future__ import annotations

from dataclasses import dataclass

from nornir.core.task import Result, Task

from fabric.remote.shell import RemoteCommandFailed, sh

MARKER = "@@MISSING"


@dataclass(frozen=True)
class ImageContents:
    """The modules python3 could not find there (empty: all of them are there)."""

    missing: tuple[str, ...]


def missing_modules(output: str) -> tuple[str, ...] | None:
    """The modules on the check's marker line (an image's entrypoint may print a banner
    first); None when there is no marker line."""
    line = next((ln for ln in output.splitlines() if ln.startswith(MARKER)), None)
    return None if line is None else tuple(line[len(MARKER):].split())


def check_launch_image(task: Task, command: str, where: str, timeout: float) -> Result:
    """Run `command` (render.image_check) on the node; changes nothing but a pulled image.
    RemoteCommandFailed naming `where` when it cannot look."""
    if task.is_dry_run():
        return Result(host=task.host, result=ImageContents(()), changed=False)
    rc, out = sh(task, command, timeout=timeout)
    missing = missing_modules(out)
    if rc != 0 or missing is None:
        raise RemoteCommandFailed(f"could not look into {where} on {task.host.name} (exit "
                                  f"{rc}): {out[-400:].strip() or '(no output)'}")
    return Result(host=task.host, result=ImageContents(missing), changed=False)
