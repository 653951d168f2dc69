"""How long `fabric doctor` takes on a pushed star8 lab (measured numbers, no assertion; the
target is under 1.5 s per run).

    .venv/bin/python bench/doctor_star8.py [TOPOLOGY] [--runs 5] [--name t-doc-bench]

Root (it builds lab NAME of TOPOLOGY, default star8, configures it with `fabric push --apply`,
and takes it down at the end). Each run is a whole `python -m fabric doctor --lab NAME` process,
wall clock from start to exit; prints each run, then the median, min and max, and the exit
codes (1 would mean a host check failed on the pushed lab).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fabric(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("topology", nargs="?", default="star8")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--name", default="t-doc-bench")
    a = ap.parse_args()
    env = dict(os.environ, FABRIC_STATE_DIR=tempfile.mkdtemp(prefix="doctor-bench-"))
    up = fabric("lab", "up", a.topology, "--name", a.name, "--switch-prepared", env=env)
    if up.returncode != 0:
        print(up.stderr, file=sys.stderr)
        return 1
    try:
        push = fabric("push", "--lab", a.name, "--apply", env=env)
        if push.returncode != 0:
            print(push.stderr[-2000:], file=sys.stderr)
            return 1
        walls, codes = [], []
        for i in range(a.runs):
            t0 = time.monotonic()
            r = fabric("doctor", "--lab", a.name, env=env)
            walls.append(time.monotonic() - t0)
            codes.append(r.returncode)
            print(f"run {i + 1}: {walls[-1]:.3f} s, exit {r.returncode}")
        print(f"fabric doctor on {a.topology} ({a.runs} runs): median "
              f"{statistics.median(walls):.3f} s, min {min(walls):.3f} s, max {max(walls):.3f} s;"
              f" exits {sorted(set(codes))}")
        return 0
    finally:
        fabric("lab", "down", "--name", a.name, env=env)


if __name__ == "__main__":
    sys.exit(main())
