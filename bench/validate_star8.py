"""Bring up a star8 lab (or the topology named as the first argument), configure it, time
`fabric validate` and print the wall time next to the bandwidth schedule's lower bound
(measured numbers, not assertions). Tears the lab down."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fabric.lab import builder


def fabric(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabric", *args], capture_output=True,
                          text=True, check=False)


def main(topology: str = "star8") -> int:
    lab = f"t-val-bench-{topology}"
    builder.down(lab)
    try:
        t0 = time.monotonic()
        builder.up(topology, lab, switch_prepared=True)
        up_s = time.monotonic() - t0
        t0 = time.monotonic()
        push = fabric("push", "--lab", lab, "--apply")
        if push.returncode != 0:
            from tests.lab.test_validate import configure_directly

            print(f"push exited {push.returncode}; configured directly", file=sys.stderr)
            configure_directly(lab)
        cfg_s = time.monotonic() - t0
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report.json"
            t0 = time.monotonic()
            proc = fabric("validate", "--lab", lab, "--json", str(out))
            wall = time.monotonic() - t0
            report = json.loads(out.read_text()) if out.exists() else {}
        sched = report.get("schedule", {})
        counts: dict[str, int] = {}
        for r in report.get("results", []):
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        print(f"{topology} lab: up {up_s:.1f} s, configured {cfg_s:.1f} s")
        print(f"fabric validate: exit {proc.returncode}, wall {wall:.1f} s "
              f"(report duration {report.get('duration_s')} s), results {counts}")
        print(f"bandwidth: {sched.get('tests')} tests in {sched.get('rounds')} rounds x "
              f"{sched.get('test_s')} s; lower bound {sched.get('lower_bound_s')} s "
              f"({sched.get('busiest_tests')} tests on {sched.get('busiest_resource')}); "
              f"measured {sched.get('wall_s')} s (rounds {sched.get('round_wall_s')})")
        return 0
    finally:
        builder.down(lab)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
