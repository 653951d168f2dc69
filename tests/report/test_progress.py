"""The live progress: off a terminal its rows are rendered once, when it stops, not at every
row added (rich rebuilds every row each time); on a terminal rich's own refresh is kept."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import TextColumn

from fabric.report.progress import RunProgress


class Counted(RunProgress):
    renders = 0

    def get_renderables(self):  # type: ignore[no-untyped-def]
        type(self).renders += 1
        return super().get_renderables()


def _run(terminal: bool) -> tuple[int, str]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=80)
    Counted.renders = 0
    with Counted(TextColumn("{task.description}"), console=console, auto_refresh=False) as p:
        started = Counted.renders
        for i in range(20):
            p.add_task(f"row {i:02d}", total=1, completed=1)
        during = Counted.renders - started
    return during, out.getvalue()


def test_off_a_terminal_the_rows_are_drawn_once_at_the_end() -> None:
    during, text = _run(terminal=False)
    assert during == 0  # none per row added
    assert [f"row {i:02d}" in text for i in range(20)] == [True] * 20


def test_on_a_terminal_each_row_added_is_drawn() -> None:
    during, text = _run(terminal=True)
    assert during >= 20
    assert "row 19" in text
