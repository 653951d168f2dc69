"""Checkouts made ready to time, as an installed package is: bytecode compiled
(`compileall`; an editable checkout run with PYTHONDONTWRITEBYTECODE would compile the toolkit
in every run) and, in a tree that has it, the dataclass methods' cache written
(`fabric.dataclass_cache.warm`, as `make`'s `bytecode` step does)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def prepare(tree: Path) -> None:
    """Compile `tree`'s bytecode and write its dataclass cache where it has one."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "fabric", "validators"],
                   cwd=tree, check=True)
    if (tree / "fabric" / "dataclass_cache.py").exists():
        subprocess.run([sys.executable, "-c", "from fabric.dataclass_cache import warm; warm()"],
                       cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True)
