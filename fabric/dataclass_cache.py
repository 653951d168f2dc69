"""The methods `dataclasses` generates, compiled once and kept beside the bytecode.

Python 3.11 writes each dataclass's `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`... as source text and compiles it with `exec` whenever the class is created, in
every process. A `fabric validate` creates about 200 dataclasses (the toolkit's records and
rich's, pydantic's, typer's) before it touches a host: that compiling was a fifth of its
start-up's instructions (358 of 1,774 M, `bench/startup_instructions.py`), about 0.1 s.

`install()` gives the `dataclasses` module an `exec` of its own (a module global, which the
module's own calls find before the builtin). A source text found in the kept file comes back
as the code object compiled for it then; any other is compiled as the builtin compiles it
(file `<string>`, no inherited future flags: `dataclasses` has none). The key is the whole
text, so a hit is exactly what `exec` would have compiled.

The file is `dataclasses.<cache tag>.marshal` in the package's bytecode directory
(`fabric/__pycache__`, or under `sys.pycache_prefix`), and follows the bytecode's rules as
`compileall` applies them: `warm()` writes it, importing every module of the toolkit (`make`'s
`bytecode` step runs both); an ordinary process reads it and writes nothing, compiling what it
lacks as Python compiles a module whose bytecode is missing. A file that is unreadable,
damaged or another Python's (it starts with `importlib.util.MAGIC_NUMBER`) is ignored. Each
text's code is unmarshalled when first asked for (a validation asks for about two thirds).

Python 3.13 compiles one text per class instead of one per method; the cache works the same.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import stat
import sys
import threading
from importlib.util import MAGIC_NUMBER, cache_from_source
from pathlib import Path
from types import CodeType
from typing import Any


def _compile(source: str | bytes) -> CodeType:
    """`source` compiled as `exec` compiles text from a module without future imports."""
    return compile(source, "<string>", "exec", dont_inherit=True)


class CompiledTexts:
    """Source text -> code object: from the file at `path` (read on first use), else
    compiled. `codes` holds every text this process asked for; `new` says whether one had to
    be compiled."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.kept: dict[str, bytes] | None = None
        self.codes: dict[str, CodeType] = {}
        self.new = False
        self.lock = threading.Lock()

    def code(self, source: str) -> CodeType:
        """The code object of `source`, compiled as `exec` would compile it."""
        code = self.codes.get(source)
        if code is not None:
            return code
        kept = self.kept
        if kept is None:
            with self.lock:
                if self.kept is None:
                    self.kept = read_texts(self.path)
                kept = self.kept
        code = _unmarshal(kept.get(source))
        if code is None:
            code = _compile(source)
            self.new = True
        self.codes[source] = code
        return code

    def save(self) -> None:
        """Write the texts this process asked for to `path`, replacing the file at once; a
        failure to write is ignored, as a bytecode file that cannot be written is."""
        if self.path is None:
            return
        import tempfile

        data = MAGIC_NUMBER + marshal.dumps({t: marshal.dumps(c) for t, c in self.codes.items()})
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name + ".")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                # readable by whoever may read the toolkit's source, as its bytecode is
                os.chmod(tmp, stat.S_IMODE(os.stat(__file__).st_mode) & 0o666)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


def _unmarshal(data: bytes | None) -> CodeType | None:
    if data is None:
        return None
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def read_texts(path: Path | None) -> dict[str, bytes]:
    """The texts kept at `path`, each with its marshalled code; empty when there is none, or
    it is unreadable, damaged or another Python's."""
    if path is None:
        return {}
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(MAGIC_NUMBER):
        return {}
    try:
        texts = marshal.loads(data[len(MAGIC_NUMBER):])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(texts, dict):
        return {}
    return {t: c for t, c in texts.items() if isinstance(t, str) and isinstance(c, bytes)}


def default_path() -> Path:
    """`dataclasses.<cache tag>.marshal` where Python keeps this package's bytecode
    (`__pycache__`, or under `sys.pycache_prefix`; `.opt-N` under `-O`, as bytecode)."""
    init = cache_from_source(str(Path(__file__).resolve().parent / "__init__.py"))
    name = Path(init).name.replace("__init__.", "dataclasses.", 1)
    return Path(init).with_name(name[: -len(".pyc")] + ".marshal")


def cached_exec(texts: CompiledTexts) -> Any:
    """An `exec` that takes the code of source text from `texts`."""

    def exec_(source: Any, globals: dict[str, Any] | None = None,
              locals: Any = None, /) -> None:
        if globals is None:  # the caller's namespaces, as the builtin takes them
            frame = sys._getframe(1)
            globals = frame.f_globals
            locals = frame.f_locals if locals is None else locals
        if isinstance(source, str):
            source = texts.code(source)
        elif isinstance(source, bytes):
            source = _compile(source)
        builtins.exec(source, globals, locals)

    return exec_


_INSTALLED: CompiledTexts | None = None


def install(path: Path | None = None) -> CompiledTexts:
    """Give `dataclasses` the cached `exec` (once per process; `path`: the kept file,
    default `default_path()`)."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = CompiledTexts(path or default_path())
        dataclasses.exec = cached_exec(_INSTALLED)  # type: ignore[attr-defined]
    return _INSTALLED


#: Modules that are not the toolkit's own code: scripts shipped to the hosts, the CLI's
#: `python -m` entry.
NOT_MODULES = ("fabric.__main__", "fabric.launch.scripts.")


def warm() -> int:
    """Import every module of `fabric` and `validators` (but `NOT_MODULES`; one that cannot
    be imported is left out) and write the file with the texts their dataclasses use (so a
    class since changed or removed leaves nothing behind); the number kept."""
    import importlib
    import pkgutil

    texts = install()
    for package in ("fabric", "validators"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + ".",
                                          onerror=lambda name: None):
            if info.name.startswith(NOT_MODULES):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    texts.save()
    return len(texts.codes)
