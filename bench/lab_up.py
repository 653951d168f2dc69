"""Time `fabric lab up star8` and `fabric lab down` on this machine (a measurement, no assertion).

    sudo .venv/bin/python bench/lab_up.py [--topology star8] [--runs 3] [--name bench-lab]

The issue's target is star8 `up` under 30 s on a 2-core VM.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

FABRIC = [sys.executable, "-m", "fabric"]


def timed(argv: list[str]) -> float:
    start = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=Path(__file__).resolve().parents[1])
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topology", default="star8")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--name", default="bench-lab")
    args = parser.parse_args()
    subprocess.run([*FABRIC, "lab", "down", "--name", args.name], check=False,
                   stderr=subprocess.DEVNULL)
    ups, downs = [], []
    for run in range(1, args.runs + 1):
        ups.append(timed([*FABRIC, "lab", "up", args.topology, "--name", args.name]))
        downs.append(timed([*FABRIC, "lab", "down", "--name", args.name]))
        print(f"run {run}: up {ups[-1]:.2f} s, down {downs[-1]:.2f} s", flush=True)
    print(f"{args.topology}: up median {statistics.median(ups):.2f} s "
          f"(min {min(ups):.2f}, max {max(ups):.2f}); down median "
          f"{statistics.median(downs):.2f} s (min {min(downs):.2f}, max {max(downs):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
