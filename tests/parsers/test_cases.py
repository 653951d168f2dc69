"""Every fixture case parses to exactly the records in its .yml (or raises the ParseError named).

Golden refresh (only on request): ``FABRIC_REGEN_GOLDEN=1 pytest tests/parsers/test_cases.py``
rewrites each .yml from the parser's output, keeping its other keys (``source``, notes).
Review the diff line by line against the .raw before committing it.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml

from fabric.errors import ParseError
from fabric.parsers import parse, record_to_dict
from tests.parsers.cases import Case, all_cases

REGEN = os.environ.get("FABRIC_REGEN_GOLDEN") == "1"
CASES = all_cases()


def _actual(case: Case) -> dict[str, Any]:
    try:
        return {"parsed_sample": [record_to_dict(r) for r in parse(case.kind, case.raw())]}
    except ParseError as err:
        return {"parse_error": {"line_no": err.line_no, "line": err.line}}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    actual = _actual(case)
    if REGEN:
        kept = {}
        if case.yml_path.exists():
            kept = {k: v for k, v in case.expected().items()
                    if k not in ("parsed_sample", "parse_error")}
        case.yml_path.write_text(
            yaml.safe_dump({**kept, **actual}, sort_keys=False, allow_unicode=True, width=100)
        )
    expected = case.expected()
    outcome = {k: v for k, v in expected.items() if k in ("parsed_sample", "parse_error")}
    assert len(outcome) == 1, f"{case.yml_path}: needs exactly one of parsed_sample/parse_error"
    assert actual == outcome


def test_there_are_cases() -> None:
    assert len(CASES) >= 70
