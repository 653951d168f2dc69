"""The batch script and the transcript splitter: rendering, real shell runs, broken input."""

from __future__ import annotations

import pytest

from fabric.tasks.collect_spark_facts import run_batch
from fabric.tasks.collect_spark_sections import TranscriptError, split_transcript
from fabric.tasks.spark_commands import (
    ABSENT_RC,
    SparkCommand,
    render_script,
    spark_commands,
    twin_commands,
)

from .helpers import TWINS, FakeSession, fixture


def _run(commands: list[SparkCommand]) -> str:
    """The transcript as `run_batch` reads it from an exec channel (a local bash here)."""
    return run_batch(FakeSession(), render_script(commands), 30)


def test_real_shell_run_splits_into_every_section() -> None:
    cmds = [
        SparkCommand("ok", "printf 'a\\nb'", None, "printf"),
        SparkCommand("missing", "no-such-tool-xyz --flag", None, "no-such-tool-xyz"),
        SparkCommand("fails", "echo boom >&2; exit 3", None, "sh"),
        SparkCommand("stdin", "cat", None, "cat"),  # stdin is closed: cannot eat the script
        SparkCommand("quote's", "echo \"it's $((1 + 1))\"", None, "echo"),
        *twin_commands("nosuch0"),
    ]
    sections = split_transcript(_run(cmds))
    assert list(sections) == [c.name for c in cmds]
    assert (sections["ok"].output, sections["ok"].rc) == ("a\nb", 0)
    assert sections["missing"].rc == 127
    assert (sections["fails"].output, sections["fails"].rc) == ("boom", 3)
    assert (sections["stdin"].output, sections["stdin"].rc) == ("", 0)
    assert sections["quote's"].output == "it's 2"
    assert sections["ethtool:nosuch0"].rc == ABSENT_RC


def test_lab_transcript_has_every_command() -> None:
    sections = split_transcript(fixture("lab_star4_spark01.transcript"))
    assert set(sections) == {c.name for c in spark_commands(TWINS)}
    assert sections["hostname"].output == "spark01"
    assert sections["mlnx_qos:enp1s0f0np0"].rc == 127


@pytest.mark.parametrize("name", ["lab_star4_spark01.transcript", "hw_ring_spark01.transcript"])
def test_recorded_pty_transcripts_and_exec_transcripts_split_alike(name: str) -> None:
    """Recorded over the pty, a transcript starts with the echoed command line; an exec channel
    gives the same text without it. Both (and CRLF line ends) split into the same sections."""
    recorded = fixture(name)
    exec_text = recorded[recorded.index("@@@FABRIC "):]
    assert exec_text != recorded
    assert split_transcript(exec_text) == split_transcript(recorded)
    assert split_transcript(exec_text.replace("\n", "\r\n")) == split_transcript(recorded)


@pytest.mark.parametrize(("text", "why"), [
    ("@@@FABRIC a@@@\nx\n", "ends inside section a"),
    ("@@@FABRIC a@@@\n@@@FABRIC b@@@\n", "never ended"),
    ("@@@FABRIC a rc=0@@@\n", "ended but None was open"),
    ("@@@FABRIC a@@@\n@@@FABRIC a rc=0@@@\n", "no end marker"),
])
def test_broken_transcripts_raise(text: str, why: str) -> None:
    with pytest.raises(TranscriptError, match=why):
        split_transcript(text)


def test_bad_netdev_name_is_refused() -> None:
    with pytest.raises(ValueError, match="not a netdev"):
        twin_commands("eth0; reboot")
