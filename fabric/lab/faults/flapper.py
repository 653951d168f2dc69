"""The flapper: the process a `flap` fault runs in the namespace of the cable's bounced end.

It takes the netdev down for `FLAP_DOWN_S` every `FLAP_PERIOD_S` until SIGTERM, and leaves it
up. Started as `python -m fabric.lab.faults flapper --dev DEV ...` (`flapper_argv`); `heal`
kills a recorded pid only while its command line still is a flapper's (`is_flapper`).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

#: A flapping cable is down this long ...
FLAP_DOWN_S = 0.3
#: ... once in every period (a validate window of a few seconds sees several bounces).
FLAP_PERIOD_S = 2.0
#: Marker of the flapper's command line (heal kills a recorded pid only if it still is one).
FLAPPER = "fabric.lab.faults"


def flapper_argv(dev: str, far: str = "") -> list[str]:
    """The command line of a flapper bouncing `dev`, and with it `far` (`NETNS:DEV`, the far
    end of a cable that passes no carrier, see `lifecycle.panel`) where given."""
    return [sys.executable, "-m", FLAPPER, "flapper", "--dev", dev,
            *(["--far", far] if far else []),
            "--down-s", str(FLAP_DOWN_S), "--period-s", str(FLAP_PERIOD_S)]


def is_flapper(pid: int, dev: str) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return FLAPPER.encode() in argv and dev.encode() in argv


def flap_forever(dev: str, down_s: float, period_s: float, far: str = "") -> int:
    """Bounce `dev` (in this process's namespace), and the far end `far` (`NETNS:DEV`) with
    it, until SIGTERM; both are left up. Exit 1 when a netdev is gone (the lab went away
    underneath)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    far_netns, _, far_dev = far.partition(":")
    ends = [["ip", "link", "set", "dev", dev]]
    ends += [["ip", "-n", far_netns, "link", "set", "dev", far_dev]] if far_dev else []

    def ip_set(state: str) -> bool:
        ok = True
        for argv in ends:
            proc = subprocess.run([*argv, state], capture_output=True, text=True, timeout=10,
                                  check=False)
            if proc.returncode != 0:
                print(f"{' '.join(argv)} {state}: {proc.stderr.strip()}", flush=True)
            ok = ok and proc.returncode == 0
        return ok

    bounces = 0
    try:
        while True:
            if not ip_set("down"):
                return 1
            bounces += 1
            print(f"{time.time():.3f} down #{bounces}", flush=True)
            time.sleep(down_s)
            if not ip_set("up"):
                return 1
            print(f"{time.time():.3f} up", flush=True)
            time.sleep(max(period_s - down_s, 0.0))
    finally:
        ip_set("up")


def parser() -> argparse.ArgumentParser:
    """The flapper's command line (`python -m fabric.lab.faults flapper ...`)."""
    p = argparse.ArgumentParser(prog=f"python -m {FLAPPER}")
    sub = p.add_subparsers(dest="cmd", required=True)
    flap = sub.add_parser("flapper", help="bounce a netdev of this namespace until SIGTERM")
    flap.add_argument("--dev", required=True)
    flap.add_argument("--far", default="", help="NETNS:DEV bounced with it (a panel cable)")
    flap.add_argument("--down-s", type=float, default=FLAP_DOWN_S)
    flap.add_argument("--period-s", type=float, default=FLAP_PERIOD_S)
    return p


def main(argv: list[str] | None = None) -> int:
    """`python -m fabric.lab.faults flapper --dev DEV ...`: the process a `flap` fault runs."""
    args = parser().parse_args(argv)
    return flap_forever(args.dev, args.down_s, args.period_s, args.far)
