"""The dataclasses' generated methods come from a file beside the bytecode
(`fabric.dataclass_cache`): the same code the builtin `exec` compiles, written only when
asked (`warm`), read back, and ignored when it cannot be trusted."""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

import fabric  # noqa: F401  (installs the cache)
from fabric import dataclass_cache
from fabric.dataclass_cache import CompiledTexts, cached_exec, default_path, read_texts

TEXT = "def __create_fn__(x):\n def f(self)->x:\n  return 1\n return f"
METHODS = ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__")


def _point() -> type:
    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 0

    return Point


def _point_with(monkeypatch: pytest.MonkeyPatch, texts: CompiledTexts) -> type:
    monkeypatch.setattr(dataclasses, "exec", cached_exec(texts), raising=False)
    return _point()


def test_installed_in_the_toolkits_processes() -> None:
    assert dataclasses.exec is not builtins.exec  # type: ignore[attr-defined]
    assert dataclass_cache.install() is dataclass_cache.install()  # once per process


def test_the_kept_methods_are_what_exec_compiles(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiled, kept, read back in another process's stead: the very code objects the
    builtin makes. Annotations stay objects, not strings: the cache compiles without this
    module's (or its own) `from __future__ import annotations`."""
    path = tmp_path / "dataclasses.test.marshal"
    first = CompiledTexts(path)
    _point_with(monkeypatch, first)
    assert first.new and len(first.codes) >= len(METHODS)
    first.save()
    again = CompiledTexts(path)
    cached = _point_with(monkeypatch, again)
    assert not again.new and set(again.codes) == set(first.codes)  # all from the file
    monkeypatch.setattr(dataclasses, "exec", builtins.exec, raising=False)
    plain = _point()
    for name in METHODS:
        a, b = getattr(cached, name), getattr(plain, name)
        assert a.__code__ == b.__code__, name
        assert a.__annotations__ == b.__annotations__, name
    assert cached.__init__.__annotations__["return"] is None
    p = cached(1, 2)
    assert repr(p).endswith("Point(x=1, y=2)")
    assert p == cached(1, 2) and p < cached(2) and hash(p) == hash(cached(1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]


def test_written_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ordinary process reads the file and writes nothing, whatever it had to compile."""
    path = tmp_path / "dataclasses.test.marshal"
    monkeypatch.setattr(dataclass_cache, "_INSTALLED", None)
    monkeypatch.setattr(dataclasses, "exec", builtins.exec, raising=False)
    texts = dataclass_cache.install(path)
    assert dataclasses.exec is not builtins.exec  # type: ignore[attr-defined]
    _point()
    assert texts.new and not path.exists()
    texts.save()
    assert set(read_texts(path)) == set(texts.codes)


def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "dataclasses.test.marshal"
    compiled = compile(TEXT, "<string>", "exec", dont_inherit=True)
    code = marshal.dumps(compiled)
    for junk in (b"", b"\x00\x01", MAGIC_NUMBER + b"\xff\xfe", b"XXXX" + marshal.dumps({}),
                 MAGIC_NUMBER + marshal.dumps([1, 2]), MAGIC_NUMBER + marshal.dumps({1: b"x"}),
                 MAGIC_NUMBER + marshal.dumps({TEXT: b"\xff"}),
                 MAGIC_NUMBER + marshal.dumps({TEXT: marshal.dumps("not code")})):
        path.write_bytes(junk)
        texts = CompiledTexts(path)
        assert texts.code(TEXT) == compiled and texts.new, junk
    path.write_bytes(MAGIC_NUMBER + marshal.dumps({TEXT: code}))
    texts = CompiledTexts(path)
    texts.code(TEXT)
    assert not texts.new


def test_the_file_lives_where_the_bytecode_does() -> None:
    path = default_path()
    assert path.name == f"dataclasses.{sys.implementation.cache_tag}.marshal"
    assert path.parent == Path(dataclass_cache.__file__).resolve().parent / "__pycache__"
    prefixed = subprocess.run(
        [sys.executable, "-B", "-X", "pycache_prefix=/tmp/fabric-prefix", "-O", "-c",
         "from fabric.dataclass_cache import default_path; print(default_path())"],
        capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert prefixed.startswith("/tmp/fabric-prefix/")
    assert prefixed.endswith(f"/fabric/dataclasses.{sys.implementation.cache_tag}.opt-1.marshal")


def test_exec_without_namespaces_uses_the_callers() -> None:
    run = cached_exec(CompiledTexts(None))
    marker = "from the caller"  # noqa: F841  (read by the executed text)
    found: dict[str, object] = {}
    run("found['x'] = marker")
    assert found == {"x": "from the caller"}
    mine: dict[str, object] = {}
    run("y = TEXT", None, mine)  # the caller's globals (this module's TEXT), these locals
    assert mine == {"y": TEXT}


_IMPORT_VALIDATE = """
import dataclasses, sys
from pathlib import Path
import fabric.dataclass_cache as cache
texts = cache.CompiledTexts(Path(sys.argv[1]))
dataclasses.exec = cache.cached_exec(texts)
import fabric.cli.validate, fabric.validate, fabric.report.terminal, rich.progress
{then}
"""


def test_a_validations_classes_compile_nothing_once_kept(tmp_path: Path) -> None:
    """End to end, on the toolkit's own modules (and rich's, pydantic's, typer's): once one
    process has kept what a validation's imports compile, the next compiles none of it."""
    path = str(tmp_path / "dataclasses.test.marshal")
    subprocess.run([sys.executable, "-c", _IMPORT_VALIDATE.format(then="texts.save()"), path],
                   capture_output=True, text=True, timeout=120, check=True)
    second = subprocess.run(
        [sys.executable, "-c", _IMPORT_VALIDATE.format(then="print(texts.new, len(texts.codes))"),
         path], capture_output=True, text=True, timeout=120, check=True)
    new, used = second.stdout.split()
    assert new == "False"  # every text came from the file
    assert int(used) > 500  # the methods of about 200 classes
