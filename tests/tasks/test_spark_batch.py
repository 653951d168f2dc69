"""The batch script and the transcript splitter: rendering, real shell runs, broken input."""

from __future__ import annotations

import subprocess

import pytest

from fabric.tasks.collect_spark_sections import TranscriptError, split_transcript
from fabric.tasks.spark_commands import (
    ABSENT_RC,
    MARK,
    SparkCommand,
    one_line,
    render_script,
    spark_commands,
    twin_commands,
)

from .helpers import TWINS, fixture


def _run(commands: list[SparkCommand]) -> str:
    line = one_line(render_script(commands))
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=30,
                          check=True).stdout


def test_one_line_hides_the_markers_and_stays_short() -> None:
    line = one_line(render_script(spark_commands(TWINS)))
    assert MARK not in line and "\n" not in line
    assert len(line) < 2000  # well under a tty's 4095-byte canonical line


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
