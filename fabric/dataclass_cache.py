"""The methods `dataclasses` generates, compiled once and kept beside the bytecode.

Python 3.11 writes each dataclass's `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`... as source text and compiles it with `exec` whenever the class is created, in
every process. A `fabric validate` creates about 200 dataclasses (the toolkit's records and
rich's, pydantic's, typer's) before it touches a host: that compiling was a fifth of its
start-up's instructions (358 of 1,774 M, `bench/startup_instructions.py`), about 0.1 s.

`install()` gives the `dataclasses` module an `exec` of its own (a module global, which the
module's own calls find before the builtin). Source text it has compiled before comes back
as the code object compiled then; the rest is compiled as the builtin would (file
`<string>`, no inherited future flags: `dataclasses` has none) and kept. The code objects
are kept in `fabric/__pycache__/dataclasses.<cache tag>.marshal`, where Python keeps the
modules' bytecode, and under the same rules: written at exit only when something new was
compiled, not where bytecode is not written (`sys.dont_write_bytecode`, a read-only
install), ignored when unreadable or written by another Python (the file starts with
`importlib.util.MAGIC_NUMBER`). The key is the whole source text, so a hit is exactly what
`exec` would have compiled. `warm()` writes it for every module of the toolkit, as
`compileall` writes their bytecode (`make`'s `bytecode` step does both).

Python 3.13 compiles one text per class instead of one per method; the cache works the same.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import stat
import sys
import threading
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

#: Past this many texts the file is rewritten with only the texts of the process writing it
#: (texts of classes since changed or removed would otherwise pile up).
MAX_TEXTS = 4096


class CompiledTexts:
    """Source text -> code object, read from `path` on first use and written back (merged
    with what the file holds by then) when `save()` finds something new."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] | None = None
        self.used: set[str] = set()
        self.new = False
        self.lock = threading.Lock()

    def code(self, source: str) -> CodeType:
        """The code object of `source`, compiled as `exec` would compile it."""
        codes = self.codes
        if codes is None:
            with self.lock:
                if self.codes is None:
                    self.codes = read_texts(self.path)
                codes = self.codes
        self.used.add(source)
        code = codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            codes[source] = code
            self.new = True
        return code

    def save(self, asked: bool = False) -> None:
        """Write the texts back where something new was compiled (atomically, merged with
        what another process may have written meanwhile); a failure to write is ignored,
        as a bytecode file that cannot be written is. `asked`: also under
        `sys.dont_write_bytecode` (as `compileall` writes bytecode)."""
        if not self.new or self.path is None or self.codes is None:
            return
        if sys.dont_write_bytecode and not asked:
            return
        import tempfile

        merged = {**read_texts(self.path), **self.codes}
        if len(merged) > MAX_TEXTS:
            merged = {t: c for t, c in self.codes.items() if t in self.used}
        with contextlib.suppress(OSError, ValueError):
            self.path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name + ".")
            try:
                # readable by whoever may read the toolkit's source, as its bytecode is
                os.fchmod(fd, stat.S_IMODE(os.stat(__file__).st_mode) & 0o666)
                with os.fdopen(fd, "wb") as out:
                    out.write(MAGIC_NUMBER + marshal.dumps(merged))
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        self.new = False


def read_texts(path: Path | None) -> dict[str, CodeType]:
    """The texts kept at `path`; empty when there is none, or it is unreadable, damaged or
    another Python's."""
    if path is None:
        return {}
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(MAGIC_NUMBER):
        return {}
    try:
        codes = marshal.loads(data[len(MAGIC_NUMBER):])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {t: c for t, c in codes.items() if isinstance(t, str) and isinstance(c, CodeType)}


def default_path() -> Path:
    """`fabric/__pycache__/dataclasses.<cache tag>.marshal`."""
    tag = sys.implementation.cache_tag or "python"
    return Path(__file__).resolve().parent / "__pycache__" / f"dataclasses.{tag}.marshal"


def cached_exec(texts: CompiledTexts) -> Any:
    """An `exec` that takes its code objects from `texts`."""

    def exec_(source: Any, globals: dict[str, Any] | None = None,
              locals: Any = None, /) -> None:
        if globals is None:  # the caller's namespaces, as the builtin takes them
            frame = sys._getframe(1)
            globals = frame.f_globals
            locals = frame.f_locals if locals is None else locals
        if isinstance(source, str):
            source = texts.code(source)
        builtins.exec(source, globals, locals)

    return exec_


_INSTALLED: CompiledTexts | None = None


def install(path: Path | None = None) -> CompiledTexts:
    """Give `dataclasses` the cached `exec` (once per process; `path`: where the texts are
    kept, default `default_path()`), saved at exit."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = CompiledTexts(path or default_path())
        dataclasses.exec = cached_exec(_INSTALLED)  # type: ignore[attr-defined]
        atexit.register(_INSTALLED.save)
    return _INSTALLED


#: Modules that are not the toolkit's own code: scripts shipped to the hosts, the CLI's
#: `python -m` entry.
NOT_MODULES = ("fabric.__main__", "fabric.launch.scripts.")


def warm() -> int:
    """Import every module of `fabric` and `validators` (but `NOT_MODULES`; one that cannot
    be imported is left out) and write the texts; the number kept."""
    import importlib
    import pkgutil

    texts = install()
    for package in ("fabric", "validators"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.startswith(NOT_MODULES):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    texts.save(asked=True)
    return len(texts.codes or {})

