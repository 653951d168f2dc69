"""Fuzz: random text and mangled real cases never raise anything but ParseError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.errors import ParseError
from fabric.parsers import KINDS, parse
from tests.parsers.cases import all_cases

CASES = all_cases()
RAWS = [(c.kind, c.raw()) for c in CASES]
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that looks a bit like tool output: digits, separators, tabs, brackets, JSON punctuation.
tool_text = st.text(
    alphabet=st.sampled_from(list("abcxyzDEV0123456789 .:/-_=#[]{}()<>\"',\t\n\\*%+")),
    max_size=300,
)


def _parse_or_parse_error(kind: str, raw: str) -> None:
    try:
        parse(kind, raw)
    except ParseError as err:
        assert err.line_no >= 0
        assert str(err)


@pytest.mark.parametrize("kind", sorted(KINDS))
@FUZZ
@given(raw=st.one_of(tool_text, st.text(max_size=200)))
def test_random_text(kind: str, raw: str) -> None:
    _parse_or_parse_error(kind, raw)


@settings(max_examples=400, deadline=None)
@given(
    case=st.sampled_from(RAWS),
    cut=st.floats(min_value=0.0, max_value=1.0),
    mutation=st.sampled_from(["truncate", "drop_line", "dup_line", "insert", "flip"]),
    position=st.floats(min_value=0.0, max_value=1.0),
    junk=tool_text,
)
def test_mangled_real_cases(
    case: tuple[str, str], cut: float, mutation: str, position: float, junk: str
) -> None:
    kind, raw = case
    lines = raw.splitlines(keepends=True)
    at = int(position * len(lines)) if lines else 0
    if mutation == "truncate":
        raw = raw[: int(cut * len(raw))]
    elif mutation == "drop_line" and lines:
        raw = "".join(lines[:at] + lines[at + 1 :])
    elif mutation == "dup_line" and lines:
        raw = "".join(lines[: at + 1] + lines[at:])
    elif mutation == "insert":
        raw = "".join([*lines[:at], junk, "\n", *lines[at:]])
    else:
        index = int(cut * len(raw))
        raw = raw[:index] + junk[:3] + raw[index + 1 :]
    _parse_or_parse_error(kind, raw)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_garbage_is_a_parse_error_naming_a_line(kind: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(kind, "hello\nthis is not tool output at all }{ [\n")
    assert info.value.line_no in (1, 2)
    assert info.value.line


@pytest.mark.parametrize("kind", sorted(k for k, spec in KINDS.items() if not spec.empty_ok))
def test_empty_output_is_a_parse_error(kind: str) -> None:
    with pytest.raises(ParseError):
        parse(kind, "")
