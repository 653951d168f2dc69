"""The batch script and the transcript splitter: rendering, real shell runs, broken input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fabric.devices.spark.commands import (
    ABSENT_RC,
    LLDP_WAIT_S,
    SparkCommand,
    gate_commands,
    lldp_command,
    render_script,
    spark_commands,
    twin_commands,
)
from fabric.devices.spark.facts import read_sections, run_batch
from fabric.remote.batch import MARK, TranscriptError
from tests.remote.helpers import FakeSession

from .helpers import TWINS, fixture, sections_of


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
    sections = read_sections(cmds, _run(cmds))
    assert list(sections) == [c.name for c in cmds]
    assert (sections["ok"].output, sections["ok"].rc) == ("a\nb", 0)
    assert sections["missing"].rc == 127
    assert (sections["fails"].output, sections["fails"].rc) == ("boom", 3)
    assert (sections["stdin"].output, sections["stdin"].rc) == ("", 0)
    assert sections["quote's"].output == "it's 2"
    assert sections["ethtool:nosuch0"].rc == ABSENT_RC


def test_lab_transcript_has_every_command() -> None:
    sections = sections_of(fixture("lab_star4_spark01.transcript"))
    assert set(sections) == {c.name for c in spark_commands(TWINS)}
    assert sections["hostname"].output == "spark01"
    assert sections["mlnx_qos:enp1s0f0np0"].rc == 127


@pytest.mark.parametrize("name", ["lab_star4_spark01.transcript", "hw_ring_spark01.transcript"])
def test_recorded_pty_transcripts_and_exec_transcripts_split_alike(name: str) -> None:
    """Recorded over the pty, a transcript starts with the echoed command line; an exec channel
    gives the same text without it. Both (and CRLF line ends) split into the same sections."""
    recorded = fixture(name)
    exec_text = recorded[recorded.index(f"{MARK} "):]
    assert exec_text != recorded
    assert sections_of(exec_text) == sections_of(recorded)
    assert sections_of(exec_text.replace("\n", "\r\n")) == sections_of(recorded)


@pytest.mark.parametrize(("text", "why"), [
    (f"{MARK} begin a\nx\n", "no output from a, b"),
    (f"{MARK} begin a\n{MARK} begin b\n", "no output from a, b"),
    (f"{MARK} end a exit=0\n", "no output from a, b"),
    (f"{MARK} begin a\n{MARK} end a exit=0\n", "no output from b"),
])
def test_broken_transcripts_raise(text: str, why: str) -> None:
    commands = [SparkCommand("a", "true", None, "true"), SparkCommand("b", "true", None, "true")]
    with pytest.raises(TranscriptError, match=why):
        read_sections(commands, text)


def test_bad_netdev_name_is_refused() -> None:
    with pytest.raises(ValueError, match="not a netdev"):
        twin_commands("eth0; reboot")


FAKE_LLDPCLI = """#!/bin/sh
# logs each call; lists a neighbour on lo from the {ready}th keyvalue read on (never if 0)
echo "$*" >> "{log}"
case "$*" in
  "-f keyvalue show neighbors")
    n=$(grep -c keyvalue "{log}")
    [ {ready} -gt 0 ] && [ "$n" -ge {ready} ] && echo "lldp.lo.via=LLDP"; exit 0;;
  "-f json show neighbors") echo '{{"lldp": {{}}}}'; exit 0;;
esac
exit 0
"""


def _lldp_run(tmp_path: Path, ready: int, devs: list[str]) -> tuple[str, list[str]]:
    """Run the LLDP row against a fake lldpcli; (its output, the lldpcli calls in order)."""
    log = tmp_path / "calls"
    log.touch()
    fake = tmp_path / "bin" / "lldpcli"
    fake.parent.mkdir()
    fake.write_text(FAKE_LLDPCLI.format(log=log, ready=ready))
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    done = subprocess.run(["sh", "-c", lldp_command(devs).shell], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text().splitlines()


@pytest.mark.skipif(not Path("/sys/class/net/lo/carrier").exists(), reason="no sysfs")
def test_lldp_read_announces_then_waits_for_the_neighbour(tmp_path: Path) -> None:
    """A cabled twin with carrier (lo here) that lists no neighbour: `lldpcli update`, then
    the table is re-read until it does, then the JSON; a netdev without carrier is not
    waited for."""
    out, calls = _lldp_run(tmp_path, ready=3, devs=["lo", "nosuchdev0"])
    kv = "-f keyvalue show neighbors"
    assert calls == [kv, "update", kv, kv, "-f json show neighbors"]
    assert json.loads(out) == {"lldp": {}}


@pytest.mark.skipif(not Path("/sys/class/net/lo/carrier").exists(), reason="no sysfs")
def test_lldp_in_steady_state_reads_twice(tmp_path: Path) -> None:
    """Every cabled twin hears its neighbour: nothing to announce or wait for."""
    _, calls = _lldp_run(tmp_path, ready=1, devs=["lo", "nosuchdev0"])
    assert calls == ["-f keyvalue show neighbors", "-f json show neighbors"]


@pytest.mark.skipif(not Path("/sys/class/net/lo/carrier").exists(), reason="no sysfs")
def test_lldp_wait_is_bounded(tmp_path: Path) -> None:
    _, calls = _lldp_run(tmp_path, ready=0, devs=["lo"])
    tries = int(LLDP_WAIT_S / 0.1)
    kv = "-f keyvalue show neighbors"
    assert calls == [kv, "update"] + [kv] * tries + ["-f json show neighbors"]


def test_gate_batch_is_narrow() -> None:
    names = [c.name for c in gate_commands(["enp1s0f0np0", "enP2p1s0f0np0"])]
    assert names == ["ip_link", "ip_addr", "show_gids", "sysfs_gids", "lldpcli",
                     "ethtool:enp1s0f0np0", "ethtool:enP2p1s0f0np0"]
    with pytest.raises(ValueError, match="not a netdev"):
        lldp_command(["eth0; reboot"])


FAKE_BEACON_LLDPCLI = """#!/bin/sh
# logs each call; lo lists a neighbour at once, and its beacon from the {ready}th keyvalue
# read on; `configure` exits {configure_rc} with a message when non-zero
echo "$*" >> "{log}"
case "$*" in
  "-f keyvalue show neighbors")
    n=$(grep -c keyvalue "{log}")
    echo "lldp.lo.via=LLDP"
    [ "$n" -ge {ready} ] && echo "lldp.lo.unknown-tlvs.unknown-tlv=0A,0B,0C,0D"; exit 0;;
  "-f json show neighbors") echo '{{"lldp": {{}}}}'; exit 0;;
  configure*) [ {configure_rc} = 0 ] || {{ echo "lldpcli: unknown command"; exit 1; }};;
esac
exit 0
"""


def _run_row(tmp_path: Path, shell: str, ready: int = 1, configure_rc: int = 0
             ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    log = tmp_path / "calls"
    log.touch()
    fake = tmp_path / "bin" / "lldpcli"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(FAKE_BEACON_LLDPCLI.format(log=log, ready=ready, configure_rc=configure_rc))
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "U": "0"}
    done = subprocess.run(["sh", "-c", shell], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    return done, log.read_text().splitlines()


def test_beacon_row_sets_the_custom_tlv_and_echoes_it(tmp_path: Path) -> None:
    from fabric.devices.spark.commands import beacon_command

    done, calls = _run_row(tmp_path, beacon_command("0A,0B,0C,0D").shell)
    assert done.returncode == 0 and done.stdout.strip() == "0A,0B,0C,0D"
    assert calls == ["configure lldp custom-tlv replace oui 0a,66,62 subtype 1 "
                     "oui-info 0A,0B,0C,0D"]
    (tmp_path / "x").mkdir()
    failed, _ = _run_row(tmp_path / "x", beacon_command("0A,0B,0C,0D").shell, configure_rc=1)
    assert failed.returncode == 1
    assert failed.stdout.strip() == "lldpcli: unknown command"  # the builder records it
    with pytest.raises(ValueError, match="not a beacon"):
        beacon_command("0A; reboot")


@pytest.mark.skipif(not Path("/sys/class/net/lo/carrier").exists(), reason="no sysfs")
def test_lldp_read_waits_for_a_spark_neighbours_beacon(tmp_path: Path) -> None:
    """lo (carrier) faces a Spark: its neighbour is listed at once, but the read waits until
    the entry carries this run's beacon; with a beacon there is no `lldpcli update`."""
    row = lldp_command(["lo"], "0A,0B,0C,0D", ["lo"])
    done, calls = _run_row(tmp_path, row.shell, ready=3)
    kv = "-f keyvalue show neighbors"
    assert done.returncode == 0
    assert calls == [kv, kv, kv, "-f json show neighbors"]
    # unheard for longer: announced again each second (10 steps), the wait still bounded
    (tmp_path / "y").mkdir()
    done, calls = _run_row(tmp_path / "y", row.shell, ready=15)
    assert calls == [kv] * 10 + ["update"] + [kv] * 5 + ["-f json show neighbors"]


def test_the_batch_announces_before_it_reads_lldp() -> None:
    from fabric.devices.spark.commands import spark_commands

    names = [c.name for c in spark_commands(["enp1s0f0np0"], beacon="0A,0B")]
    assert names.index("lldp_beacon") + 1 == names.index("lldpcli")
    assert "lldp_beacon" not in [c.name for c in spark_commands(["enp1s0f0np0"])]


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_batch_knows_the_login_user_id_in_any_shell(shell: str) -> None:
    """`U` is the user id whether the login shell is bash ($EUID, no process) or POSIX sh."""
    script = render_script([SparkCommand("uid", 'echo "$U"', None, "echo")])
    done = subprocess.run([shell, "-c", script], capture_output=True, text=True, timeout=20,
                          check=True)
    assert f"\n{os.geteuid()}\n" in done.stdout


def test_only_a_batch_nothing_waits_on_is_reniced() -> None:
    rows = [SparkCommand("a", "true", None, "true")]
    assert "renice -n 10 $$" in render_script(rows)
    assert "renice -n 19 $$" in render_script(rows, behind=True)
    assert "renice" not in render_script(rows, niced=False)  # the probes' rows: waited for
