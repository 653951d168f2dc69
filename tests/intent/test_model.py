"""The intent's derived views: made once, handed out so no caller can change them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fabric.intent.build import load_intent
from fabric.intent.model import Intent, InterfaceIntent


def test_the_planned_netdevs_are_made_once_and_handed_out_as_new_lists(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks ask for the planned netdevs per port and per ping (106 times in a star16
    validation); they are made once per intent, and each caller gets its own list."""
    made: list[str] = []
    iterate = Intent._iter_interfaces

    def counted(self: Intent) -> Iterator[InterfaceIntent]:
        made.append(self.name)
        return iterate(self)

    monkeypatch.setattr(Intent, "_iter_interfaces", counted)
    intent = load_intent("star8")
    everything = intent.interfaces()
    everything.clear()
    assert len(intent.interfaces()) == 16 and intent.interfaces() is not intent.interfaces()
    assert [i.netdev for i in intent.interfaces("spark03")] == [
        i.netdev for i in intent.interfaces() if i.host == "spark03"] != []
    assert made == ["star8"]
