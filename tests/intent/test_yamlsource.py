"""YAML with line numbers: the values are exactly what `yaml.safe_load` gives, every key and
item has its line, and duplicate keys and syntax errors are named with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabric.errors import InputError
from fabric.intent.yamlsource import load_text, load_yaml

DOC = """\
name: star8
mtu: 9000
ratio: 0.7
on: yes
none:
when: 2026-12-01
hosts:
  - name: spark01
    ports: [p0, p1]
  - {name: spark02, node_id: 2}
anchored: &a {x: 1}
again: *a
'quoted: 1': "007"
"""


def test_values_are_safe_loads_and_lines_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(DOC)
    doc = load_yaml(path)
    assert doc.data == yaml.safe_load(DOC) == load_text(DOC)
    assert doc.lines[("mtu",)] == 2 and doc.lines[("hosts", 1)] == 10
    assert doc.line_of(("hosts", 0, "ports", 1)) == 9
    assert doc.problem(("hosts", 1, "node_id"), "bad").line == 10


def test_duplicate_keys_and_syntax_errors_name_file_and_line(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("a: 1\nb:\n  c: 1\n  c: 2\n")
    with pytest.raises(InputError) as exc:
        load_yaml(dup)
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (str(dup), 4, "b.c")
    assert "duplicate key" in problem.message
    assert str(exc.value) == f"{dup}:4 [b.c]: duplicate key"  # what the user reads names it
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: 1\nb: [1, 2\nc: 3\n")
    with pytest.raises(InputError) as exc:
        load_yaml(bad)
    problem = exc.value.problems[0]
    assert problem.file == str(bad) and problem.line is not None and problem.line >= 2
    assert problem.message.startswith("YAML syntax: ")


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    ("a: 1\n\tb: 2\n", 2, "", "'\\t' that cannot start any token"),
    ("a: *nope\n", 1, "", "undefined alias 'nope'"),
    ("a:\n  when: 2026-13-01\n", 2, "a.when", "'2026-13-01': month must be in 1..12"),
    ("hosts:\n  - port: !!int abc\n", 2, "hosts[0].port", "'abc'"),
    ("a: !custom 1\n", 1, "a", "tag '!custom'"),
    ("a: &x [*x]\n", None, "", "refers to itself"),
])
def test_bad_yaml_is_an_input_error_with_its_line(tmp_path: Path, text: str, line: int | None,
                                                  field: str, words: str) -> None:
    """No traceback for any of them: exit 2 with the file, line, field and a message that
    names the culprit (libyaml reads the file; PyYAML words a syntax error)."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_yaml(path)
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (str(path), line, field)
    assert words in problem.message
