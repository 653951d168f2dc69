"""The one batch protocol in a real shell: named and positional jobs, the sequential modes,
a batch inside a batch's job, and jobs that never came back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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
