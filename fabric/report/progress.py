"""The live progress of a long run (per-host rows on stderr), drawn as the terminal allows."""

from __future__ import annotations

from rich.progress import Progress


class RunProgress(Progress):
    """A rich Progress that, off a terminal (a log, CI), renders its rows once, when it stops.

    rich rebuilds the whole table of rows at every `add_task` (its `refresh`), also when
    nothing is drawn until the end: a 16-Spark validation adds about 35 rows, each rendering
    every row before it, on the thread that starts the probes. On a terminal it refreshes as
    rich does (`auto_refresh`, 4 Hz)."""

    def refresh(self) -> None:
        if self.console.is_terminal:
            super().refresh()
