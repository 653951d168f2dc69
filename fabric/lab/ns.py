"""Running commands in and around network namespaces, and waiting on real conditions."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from fabric.errors import FabricError


class LabError(FabricError):
    """Building, changing or tearing down a lab failed (exit 3)."""


def run(argv: Sequence[str], *, input: str | None = None, check: bool = True,
        timeout: float = 30.0) -> str:
    """Run a command; LabError with its stderr when it fails and `check` is set."""
    try:
        proc = subprocess.run(list(argv), input=input, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise LabError(f"{argv[0]} is not installed (run `make apt`)") from exc
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"{' '.join(argv)}: no answer within {timeout:.0f}s") from exc
    if check and proc.returncode != 0:
        raise LabError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def ip_batch(lines: Iterable[str], netns: str | None = None, *, force: bool = False) -> None:
    """Feed `ip -batch -` (optionally in a namespace); one process for many changes."""
    text = "".join(f"{line}\n" for line in lines)
    if not text:
        return
    argv = ["ip", *(["-n", netns] if netns else []), *(["-force"] if force else []),
            "-batch", "-"]
    run(argv, input=text, check=not force)


def sysctl(netns: str, settings: dict[str, str]) -> None:
    """Set `net.*` sysctls inside a network namespace (they are per namespace)."""
    if settings:
        run(["nsenter", f"--net=/run/netns/{netns}", "sysctl", "-q", "-w",
             *(f"{k}={v}" for k, v in settings.items())])


def read_sysctls(netns: str, keys: Sequence[str]) -> dict[str, str]:
    """Current values of `net.*` sysctls inside a network namespace."""
    out = run(["nsenter", f"--net=/run/netns/{netns}", "sysctl", *keys]) if keys else ""
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def in_ns(netns: str, argv: Sequence[str]) -> list[str]:
    """argv that runs in a network namespace only (no private mounts or hostname)."""
    return ["ip", "netns", "exec", netns, *argv]


def in_host(holder_pid: int, argv: Sequence[str]) -> list[str]:
    """argv that runs inside a lab host: its network, mount and UTS namespaces."""
    return ["nsenter", "-t", str(holder_pid), "-m", "-u", "-n", "--", *argv]


def netns_exists(netns: str) -> bool:
    return Path("/run/netns", netns).exists()


def netns_inode(netns: str) -> int | None:
    try:
        return os.stat(Path("/run/netns", netns)).st_ino
    except OSError:
        return None


def pids_in_netns(inodes: set[int]) -> list[int]:
    """Every live process whose network namespace is one of `inodes`."""
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(entry / "ns" / "net").st_ino in inodes:
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def kill_all(pids: Iterable[int], timeout: float = 5.0) -> None:
    """SIGTERM, wait for them to go, then SIGKILL whatever is left."""
    pending = [p for p in pids if p != os.getpid()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pending:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for pid in pending:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
            pending = [p for p in pending if alive(p)]
            if pending:
                time.sleep(0.02)
        if not pending:
            return


def wait_until(what: str, ready: Callable[[], bool], timeout: float = 20.0,
               failed: Callable[[], str | None] | None = None) -> None:
    """Poll `ready` until it holds; LabError naming `what` on timeout or when `failed` says."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        if ready():
            return
        why = failed() if failed else None
        if why:
            raise LabError(f"{what}: {why}")
        if time.monotonic() > deadline:
            raise LabError(f"{what}: not ready after {timeout:.0f}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True if a TCP connection to host:port succeeds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def unix_socket_open(path: Path) -> bool:
    """True if a stream connection to the UNIX socket at `path` is accepted (bound AND
    listening: the socket file appears at bind(), before listen())."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def spawn(argv: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
    """Start a long-lived daemon detached from us (own session), output to `log`; its pid."""
    with open(log, "ab") as fh:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=fh, stderr=fh,
                                start_new_session=True, cwd="/", env=env, close_fds=True)
    return proc.pid


def exited_with(pid: int, log: Path) -> str | None:
    """A reason if daemon `pid` is gone (with the tail of its log), else None."""
    if alive(pid):
        return None
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
    return "exited" + (f": {' | '.join(tail)}" if tail else "")
