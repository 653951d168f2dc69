"""Discovery of the parser fixture cases: tests/parsers/<platform>/<kind>/<case>.raw + .yml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CASES_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Case:
    """One fixture: raw tool output and the expected records (or the expected ParseError)."""

    platform: str
    kind: str
    name: str
    raw_path: Path

    @property
    def yml_path(self) -> Path:
        return self.raw_path.with_suffix(".yml")

    @property
    def id(self) -> str:
        return f"{self.platform}/{self.kind}/{self.name}"

    def raw(self) -> str:
        # newline="" keeps \r and every byte as captured
        with self.raw_path.open(encoding="utf-8", newline="") as handle:
            return handle.read()

    def expected(self) -> dict[str, Any]:
        data = yaml.safe_load(self.yml_path.read_text(encoding="utf-8"))
        assert isinstance(data, dict), self.yml_path
        return data


def all_cases() -> list[Case]:
    """Every ``.raw`` file below tests/parsers, sorted."""
    return [
        Case(raw.parent.parent.name, raw.parent.name, raw.stem, raw)
        for raw in sorted(CASES_DIR.glob("*/*/*.raw"))
    ]
