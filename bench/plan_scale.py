"""Time planning + analysing synthetic CRS804 leaf-spine fabrics (prints numbers only).

Usage: .venv/bin/python bench/plan_scale.py [NODES ...]
"""

from __future__ import annotations

import sys
import time

from fabric.plan.synth import plan_and_analyse


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [64, 128, 256, 512]
    for nodes in sizes:
        for oversub in (1.0, 3.0):
            t0 = time.perf_counter()
            out = plan_and_analyse(nodes, oversub, 2**28)
            wall = time.perf_counter() - t0
            d, m = out["design"], out["metrics"]
            print(f"nodes={nodes:4d} oversub={oversub:g} leaves={d['leaves']:3d} "
                  f"spines={d['spines']} bisection={m['bisection_gbps']:.0f}Gb/s "
                  f"allreduce(256MiB)={m['allreduce_ms']:.2f}ms wall={wall:.3f}s")


if __name__ == "__main__":
    main(sys.argv[1:])
