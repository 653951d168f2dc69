"""The one batch protocol in a real shell: named and positional jobs, the sequential modes,
a batch inside a batch's job, and jobs that never came back."""

from __future__ import annotations

import subprocess

import pytest

from fabric.remote.batch import (
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
