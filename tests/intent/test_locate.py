"""Finding a topology by name: the known ones are listed, and with none (an installed wheel
run outside a checkout) the error says how to name one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.intent import locate


def test_unknown_name_lists_the_known_topologies() -> None:
    with pytest.raises(InputError, match=r"known: .*star4"):
        locate.resolve_topology("nosuch")


def test_no_topologies_anywhere_says_how_to_name_one(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setattr(locate, "topology_dirs", lambda: [tmp_path / "topologies"])
    with pytest.raises(InputError, match="pass a YAML file, or set FABRIC_TOPOLOGIES"):
        locate.resolve_topology("star4")
