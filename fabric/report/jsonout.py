"""The report as JSON (the `fabric.report/1` contract), to a file or stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from fabric.report.model import Report, report_to_json


def write_json(report: Report, path: Path | str | None, text: str | None = None) -> None:
    """Write the report JSON to `path` atomically (the gate never reads half a file), or to
    stdout when `path` is None. `text`: the report's JSON where the caller already made it
    (`report_to_json`; a run that writes the report twice builds it once)."""
    if text is None:
        text = report_to_json(report)
    if path is None:
        sys.stdout.write(text)
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
