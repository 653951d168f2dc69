"""The flapper's command line: what `flap` starts, what `heal` recognises, `-m` still runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fabric.lab.faults import FLAPPER
from fabric.lab.faults.flapper import flapper_argv, is_flapper, parser

REPO = Path(__file__).resolve().parents[2]


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_flapper_is_started_as_the_package_module() -> None:
    argv = flapper_argv("cx7-p0")
    assert argv == [sys.executable, "-m", "fabric.lab.faults", "flapper", "--dev", "cx7-p0",
                    "--down-s", "0.3", "--period-s", "2.0"]
    assert FLAPPER == "fabric.lab.faults"


def test_the_argv_parses_back() -> None:
    args = parser().parse_args(flapper_argv("cx7-p1")[3:])
    assert (args.cmd, args.dev, args.down_s, args.period_s) == ("flapper", "cx7-p1", 0.3, 2.0)


def test_python_dash_m_runs_the_flapper_command_line() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", FLAPPER, "flapper", "--help"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "--dev" in proc.stdout and "--period-s" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", FLAPPER], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "flapper" in proc.stderr


def test_a_pid_is_a_flapper_only_while_its_command_line_says_so() -> None:
    assert not is_flapper(os.getpid(), "cx7-p0")  # pytest: not a flapper
    assert not is_flapper(2**22 + 12345, "cx7-p0")  # no such process
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)",
                                FLAPPER, "cx7-p0"])
    try:  # until it has exec'd, /proc shows the forked pytest's command line
        assert eventually(lambda: is_flapper(sleeper.pid, "cx7-p0"))
        assert not is_flapper(sleeper.pid, "cx7-p1")
    finally:
        sleeper.kill()
        sleeper.wait()
