#!/usr/bin/env python3
"""Instructions `fabric validate` runs before it touches a host, counted with cachegrind.

On a shared two-core machine the wall and CPU time of the start-up swing by 10-30 % from one
run to the next, so a change worth 10 ms cannot be seen in them. The number of instructions
the process executes barely moves (about 0.5 % between runs of the same tree), and it is the
same on a faster or slower machine. This bench counts them from the interpreter's start to the
moment the validation would begin (`fabric.validate.run_validation` is replaced by an exit),
for this tree and, with `--baseline TREE`, for another one, alternated, and splits each count
into what the interpreter spent parsing and compiling source text at run time (dataclasses'
generated methods, mostly), unmarshalling bytecode, collecting cycles, compiling regexes and
everything else.

    bench/startup_instructions.py [--runs 3] [--baseline /tmp/base] [--topology star8]

Both trees are made ready first as an installed package is (`bench/trees.py`). It needs
valgrind (`apt-get install valgrind`); no lab is needed (the repository's inventory
is read, no host is contacted). Each run takes 20-40 s under valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from trees import prepare  # bench/trees.py, beside this script

REPO = Path(__file__).resolve().parents[1]

#: Runs `python -m fabric validate ...` and exits where the validation would begin.
DRIVER = """
import importlib.abc, runpy, sys

class StopAtRun(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "fabric.validate":
            return None
        sys.meta_path.remove(self)
        spec = next(s for f in sys.meta_path
                    if (s := f.find_spec(name, path, target)) is not None)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.run_validation = lambda *a, **k: sys.exit(0)

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, StopAtRun())
sys.argv = ["fabric", *sys.argv[1:]]
runpy.run_module("fabric", run_name="__main__", alter_sys=True)
"""

#: cachegrind's function names (CPython's source files) by what the work was.
CATEGORIES = (
    ("parse + compile source", re.compile(
        r"/Parser/|/Python/(compile|symtable|ast|ast_opt|pyarena|Python-ast|future)\.c")),
    ("unmarshal bytecode", re.compile(r"/Python/marshal\.c")),
    ("cyclic collector", re.compile(r"/Modules/gcmodule\.c")),
    ("regex compile and match", re.compile(r"/Modules/_sre")),
)


def count(tree: Path, topology: str, out: Path) -> int:
    """Instructions of one start-up of `tree`'s validate; cachegrind's file at `out` (the
    driver is a file beside it: cachegrind writes the command line into its file's header,
    which a multi-line `-c` would break)."""
    driver = out.with_suffix(".py")
    driver.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    argv = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
            f"--cachegrind-out-file={out}", sys.executable, str(driver),
            "validate", "-i", str(REPO / "inventory"), "-t", topology]
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{tree}: the start-up did not run to the validation "
                         f"(exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def split(out: Path) -> dict[str, int]:
    """The count of one run by `CATEGORIES` (the rest under "other")."""
    text = subprocess.run(["cg_annotate", "--threshold=0", str(out)], capture_output=True,
                          text=True, check=True).stdout
    parts = dict.fromkeys([name for name, _ in CATEGORIES] + ["other"], 0)
    rows = text.split("file:function", 1)[-1].splitlines()
    for row in rows:
        found = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+(\S.*)$", row)
        if found is None:
            continue
        n, where = int(found.group(1).replace(",", "")), found.group(2)
        name = next((c for c, pattern in CATEGORIES if pattern.search(where)), "other")
        parts[name] += n
    return parts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout, counted alternately")
    ap.add_argument("--topology", default="star8")
    args = ap.parse_args()
    for tool in ("valgrind", "cg_annotate"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed: apt-get install valgrind")
    trees = [("now", REPO)] + ([("baseline", args.baseline)] if args.baseline else [])
    for _, tree in trees:  # each as an installed package is (bytecode, dataclass cache)
        prepare(tree)
    got: dict[str, list[int]] = {name: [] for name, _ in trees}
    parts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for name, tree in trees if i % 2 == 0 else trees[::-1]:
                out = Path(tmp) / f"{name}.{i}.out"
                got[name].append(count(tree, args.topology, out))
                parts.setdefault(name, split(out))
                print(f"  run {i + 1} {name}: {got[name][-1] / 1e6:,.1f} M instructions",
                      flush=True)
    print(f"\nvalidate -t {args.topology}, interpreter start to the run (medians of "
          f"{args.runs}):")
    for name, _ in trees:
        total = statistics.median(got[name])
        print(f"  {name:8s} {total / 1e6:8,.1f} M instructions "
              f"({min(got[name]) / 1e6:,.1f}-{max(got[name]) / 1e6:,.1f})")
        first = sum(parts[name].values())
        for part, n in parts[name].items():
            print(f"      {part:26s} {n / 1e6:8,.1f} M  {100 * n / first:5.1f} %")
    if args.baseline:
        now, base = statistics.median(got["now"]), statistics.median(got["baseline"])
        change = now - base
        print(f"  now - baseline: {change / 1e6:+,.1f} M ({100 * change / base:+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
