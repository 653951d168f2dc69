"""Meta-tests: the template index, the kind registry and the fixture cases cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabric.parsers import KINDS
from fabric.parsers.textfsm_runner import INDEX_FILE, TEMPLATE_DIR, template_index, template_states
from tests.parsers.cases import all_cases

TEMPLATES = sorted(TEMPLATE_DIR.glob("*.textfsm"))
CASE_KINDS = {(c.platform, c.kind) for c in all_cases()}


def test_index_names_existing_templates_and_every_template_is_indexed() -> None:
    indexed = set(template_index().values())
    on_disk = {p.name for p in TEMPLATES}
    assert indexed == on_disk


def test_index_commands_are_template_kinds() -> None:
    template_kinds = {name for name, kind in KINDS.items() if kind.template}
    assert set(template_index()) == template_kinds


def test_index_platform_column_matches_template_prefix_and_kind() -> None:
    for line in INDEX_FILE.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4 or parts[0] == "Template" or line.startswith("#"):
            continue
        template, _, platform, command = parts
        assert template.startswith(f"{platform}_"), line
        assert KINDS[command].platform == platform, line


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_has_a_case(kind: str) -> None:
    assert (KINDS[kind].platform, kind) in CASE_KINDS


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_every_template_has_a_case(template: Path) -> None:
    kinds = [k for k, name in template_index().items() if name == template.name]
    assert any((KINDS[k].platform, k) in CASE_KINDS for k in kinds)


def test_every_case_dir_is_a_kind() -> None:
    for platform, kind in CASE_KINDS:
        assert kind in KINDS and KINDS[kind].platform == platform, (platform, kind)


def _states_marked_lenient(template: Path) -> set[str]:
    """States whose header is directly preceded by a comment mentioning 'lenient'."""
    marked: set[str] = set()
    comments: list[str] = []
    for line in template.read_text().splitlines():
        if line.startswith("#"):
            comments.append(line)
            continue
        if re.match(r"^\w+\s*$", line) and any("lenient" in c.lower() for c in comments):
            marked.add(line.strip())
        comments = []
    return marked


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_every_state_ends_in_error_unless_marked_lenient(template: Path) -> None:
    lenient = _states_marked_lenient(template)
    for state, rules in template_states(template).items():
        if state in lenient:
            continue
        assert rules and rules[-1] == ("^.", "Error"), (
            f"{template.name}: state {state} must end in ^. -> Error"
        )


def test_lenient_marker_is_rare() -> None:
    """Leniency is the exception: at most one state per template, and only where documented."""
    for template in TEMPLATES:
        assert len(_states_marked_lenient(template)) <= 1, template.name
