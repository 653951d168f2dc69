"""The one batch protocol in a real shell: named and positional jobs, the sequential modes,
a batch inside a batch's job, and jobs that never came back."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fabric.remote import batch
from fabric.remote.batch import (
    STARTED,
    TranscriptError,
    batch_script,
    exec_batch,
    require_all,
    split_batch,
)

from .helpers import FakeSession


def _sh(script: str) -> str:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30,
                          check=True).stdout


def test_named_jobs_keep_their_names_and_an_exit_ends_only_its_job() -> None:
    jobs = {"one": "echo 1", "two:x": "echo 2 >&2; exit 3", "three's": "printf 3"}
    outs = split_batch(_sh(batch_script(jobs)), list(jobs))
    assert [(o.name, o.text, o.exit_code) for o in outs] == [
        ("one", "1\n", 0), ("two:x", "2\n", 3), ("three's", "3\n", 0)]


def test_sequential_jobs_may_stop_at_the_first_failure() -> None:
    steps = ["echo a", "false", "echo never"]
    every = split_batch(_sh(batch_script(steps, parallel=False)), 3)
    assert [o.exit_code for o in every] == [0, 1, 0]
    stopped = split_batch(_sh(batch_script(steps, parallel=False, stop_on_error=True)), 3)
    assert [o.exit_code for o in stopped] == [0, 1, None]


def test_a_batch_inside_a_job_splits_at_both_levels() -> None:
    inner = batch_script({"hostname": "echo h", "uname": "echo u; exit 2"})
    outer = split_batch(_sh(batch_script({"facts": inner, "ping": "echo p"})),
                        ["facts", "ping"])
    assert outer[1].text == "p\n"
    inside = split_batch(outer[0].text, ["hostname", "uname"])
    assert [(o.text, o.exit_code) for o in inside] == [("h\n", 0), ("u\n", 2)]


def test_a_missing_job_is_named() -> None:
    outs = exec_batch(FakeSession(lambda _c, _s: (0, "@@fabric-job begin a\nx\n")),
                      {"a": "true", "b": "true"}, 10)
    with pytest.raises(TranscriptError, match="no output from a, b"):
        require_all(outs)
    with pytest.raises(ValueError, match="one word"):
        batch_script({"two words": "true"})


def test_an_announcing_batch_says_started_while_its_jobs_still_run(tmp_path: Path) -> None:
    """`announce`: STARTED comes once every job is started, before any has to end (here a job
    that waits on a FIFO nobody has written yet); it is no part of any job's output."""
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    script = batch_script({"waits": f"read -r x <{fifo}; echo $x", "quick": "echo q"},
                          announce=True)
    with subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"{STARTED}\n"
        fifo.write_text("went\n")
        rest = proc.stdout.read()
    outs = split_batch(rest, ["waits", "quick"])
    assert [(o.text, o.exit_code) for o in outs] == [("went\n", 0), ("q\n", 0)]


def test_exec_batch_tells_when_the_host_started_the_jobs() -> None:
    told: list[str] = []
    session = FakeSession()
    outs = exec_batch(session, {"a": "echo a"}, 10, on_started=lambda: told.append("started"))
    assert told == ["started"] and [(o.text, o.exit_code) for o in outs] == [("a\n", 0)]
    assert STARTED in session.channels[0].command


#: How long a test here waits for a shell before it fails rather than hangs.
BOUND_S = 30.0


def _logged(condition: str, looks: Path) -> str:
    """`condition`, each look logged to `looks` as `yes` or `no`."""
    return (f"{{ if {condition}; then echo yes >>{looks}; true; "
            f"else echo no >>{looks}; false; fi; }}")


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@contextlib.contextmanager
def _shell(script: str) -> Iterator[subprocess.Popen[str]]:
    """`script` running in sh, killed after `BOUND_S` (a broken batch fails, not hangs)."""
    with subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        watchdog = threading.Timer(BOUND_S, lambda: os.killpg(proc.pid, signal.SIGKILL))
        watchdog.start()
        try:
            yield proc
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)


def _release(fifo: Path) -> None:
    """Write a line to `fifo` once a job reads it (fails past `BOUND_S`)."""
    deadline = time.monotonic() + BOUND_S
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.001)  # no reader yet: leave the CPU to the shell that will open it
            continue
        with os.fdopen(fd, "w") as out:
            out.write("go\n")
        return


def _until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND_S
    while not done():
        assert time.monotonic() < deadline


def test_a_ready_condition_holds_the_announcement_back_until_it_holds(tmp_path: Path) -> None:
    """With `ready`, STARTED waits for the condition (looked at again and again), not only
    for the jobs to start."""
    # two FIFOs: a second open of one FIFO could still meet the first writer, read its EOF
    # and end the job before the second release (it did on a loaded machine)
    go, again = tmp_path / "go", tmp_path / "again"
    flag, looks = tmp_path / "flag", tmp_path / "looks"
    os.mkfifo(go)
    os.mkfifo(again)
    script = batch_script({"job": f"read -r x <{go}; touch {flag}; read -r x <{again}"},
                          announce=True, ready=_logged(f"[ -e {flag} ]", looks))
    with _shell(script) as proc:
        assert proc.stdout is not None
        _until(lambda: "no" in _lines(looks))  # held back: its job is not ready yet
        _release(go)  # the job makes the flag, then waits again
        assert proc.stdout.readline() == f"{STARTED}\n"
        assert _lines(looks)[-1] == "yes"
        _release(again)
        assert split_batch(proc.stdout.read(), ["job"])[0].exit_code == 0


def test_a_batch_whose_jobs_ended_announces_without_waiting_for_ready(tmp_path: Path) -> None:
    looks = tmp_path / "looks"
    out = _sh(batch_script({"quick": "true"}, announce=True, ready=_logged("false", looks)))
    assert out.startswith(STARTED)
    assert 1 <= len(_lines(looks)) < batch.READY_POLLS  # it stopped: no job runs any more


def test_a_batch_announces_once_its_looks_run_out(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "READY_POLLS", 2)
    go, looks = tmp_path / "go", tmp_path / "looks"
    os.mkfifo(go)
    script = batch_script({"waits": f"read -r x <{go}"}, announce=True,
                          ready=_logged("false", looks))
    with _shell(script) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"{STARTED}\n"
        assert _lines(looks) == ["no"] * 3  # the first look and two more
        _release(go)
        assert split_batch(proc.stdout.read(), ["waits"])[0].exit_code == 0


def test_a_nested_batch_keeps_its_files_in_its_enclosing_batch_directory(
        tmp_path: Path) -> None:
    """A batch run in a job of another (a burst's facts batch) makes no directory of its own
    (no `mktemp`, no `rm`: a process each): its files sit under its job's prefix in the
    enclosing batch's directory, are printed once, inside its job, and go with it."""
    inner = batch_script({"x": f"ls -A {tmp_path}", "y": "echo y"})
    script = batch_script({"outer": inner, "b": "echo b"})
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=BOUND_S,
                         check=True, env={**os.environ, "TMPDIR": str(tmp_path)}).stdout
    outer, b = split_batch(out, ["outer", "b"])
    x, y = split_batch(outer.text, ["x", "y"])
    assert len(x.text.split()) == 1 and x.text.startswith("fabric-batch.")  # the outer's only
    assert y.text == "y\n" and b.text == "b\n"
    assert out.count("@@fabric-job begin x") == 1
    assert list(tmp_path.iterdir()) == []
