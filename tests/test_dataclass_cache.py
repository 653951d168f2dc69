"""The dataclasses' generated methods come from a cache beside the bytecode
(`fabric.dataclass_cache`): the same code the builtin `exec` compiles, kept and read back
under the bytecode's rules."""

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
from fabric.dataclass_cache import CompiledTexts, cached_exec, read_texts

TEXT = "def __create_fn__(x):\n def f(self)->x:\n  return 1\n return f"


def _point() -> type:
    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 0

    return Point


def test_installed_in_the_toolkits_processes() -> None:
    assert dataclasses.exec is not builtins.exec  # type: ignore[attr-defined]
    assert dataclass_cache.install() is dataclass_cache.install()  # once per process


def test_the_cached_methods_are_what_exec_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Annotations stay objects, not strings: the cache compiles without this module's (or
    its own) `from __future__ import annotations`."""
    cached = _point()
    monkeypatch.setattr(dataclasses, "exec", builtins.exec, raising=False)
    plain = _point()
    for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__"):
        a, b = getattr(cached, name), getattr(plain, name)
        assert a.__code__.co_code == b.__code__.co_code, name
        assert a.__annotations__ == b.__annotations__, name
    assert cached.__init__.__annotations__["return"] is None
    p = cached(1, 2)
    assert repr(p).endswith("Point(x=1, y=2)")
    assert p == cached(1, 2) and p < cached(2) and hash(p) == hash(cached(1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]


def test_kept_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "__pycache__" / "dataclasses.test.marshal"
    texts = CompiledTexts(path)
    code = texts.code(TEXT)
    assert texts.new
    texts.save(asked=True)
    assert path.read_bytes().startswith(MAGIC_NUMBER)
    again = CompiledTexts(path)
    assert again.code(TEXT) == code and not again.new
    again.save(asked=True)  # nothing new: not rewritten
    assert read_texts(path) == {TEXT: code}


def test_not_written_where_bytecode_is_not(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dataclasses.test.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    texts = CompiledTexts(path)
    texts.code(TEXT)
    texts.save()
    assert not path.exists()
    texts.save(asked=True)  # as compileall writes bytecode when asked
    assert TEXT in read_texts(path)


@pytest.fixture
def writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where texts are kept, in a process that writes bytecode."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "dataclasses.test.marshal"


def test_a_damaged_or_foreign_file_is_ignored_and_replaced(writable: Path) -> None:
    path = writable
    for junk in (b"", b"\x00\x01", MAGIC_NUMBER + b"\xff\xfe", b"XXXX" + marshal.dumps({}),
                 MAGIC_NUMBER + marshal.dumps([1, 2]), MAGIC_NUMBER + marshal.dumps({1: "x"})):
        path.write_bytes(junk)
        assert read_texts(path) == {}
        texts = CompiledTexts(path)
        texts.code(TEXT)
        texts.save()
        assert TEXT in read_texts(path)


def test_merged_with_another_processs_texts_and_bounded(writable: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    path = writable
    first, second = CompiledTexts(path), CompiledTexts(path)
    first.code(TEXT)
    other = TEXT.replace("return 1", "return 2")
    second.code(other)
    first.save()
    second.save()
    assert set(read_texts(path)) == {TEXT, other}
    monkeypatch.setattr(dataclass_cache, "MAX_TEXTS", 1)
    third = CompiledTexts(path)
    third.code(TEXT.replace("return 1", "return 3"))
    third.save()  # past the bound: only what this process used
    assert list(read_texts(path)) == [TEXT.replace("return 1", "return 3")]


def test_exec_without_namespaces_uses_the_callers() -> None:
    run = cached_exec(CompiledTexts(None))
    marker = "from the caller"  # noqa: F841  (read by the executed text)
    found: dict[str, object] = {}
    run("found['x'] = marker")
    assert found == {"x": "from the caller"}


_IMPORT_VALIDATE = """
import fabric.dataclass_cache as cache
import fabric.cli.validate, fabric.validate, fabric.report.terminal, rich.progress
texts = cache.install()
{then}
"""


def test_a_validations_classes_compile_nothing_once_kept() -> None:
    """End to end, on the toolkit's own modules (and rich's, pydantic's, typer's): once one
    process has kept what a validation's imports compile, the next compiles none of it."""
    run = [sys.executable, "-c"]
    first = subprocess.run([*run, _IMPORT_VALIDATE.format(then="texts.save(asked=True)")],
                           capture_output=True, text=True, timeout=120, check=True)
    assert first.stderr == ""
    second = subprocess.run(
        [*run, _IMPORT_VALIDATE.format(then="print(texts.new, len(texts.used))")],
        capture_output=True, text=True, timeout=120, check=True)
    new, used = second.stdout.split()
    assert new == "False"  # every text came from the file
    assert int(used) > 500  # the methods of about 200 classes
