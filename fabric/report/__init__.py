"""Check results, the report and its writers (JSON, JUnit, Markdown, HTML, terminal).

The names are loaded on first use (PEP 562): `fabric.report.model` alone is light, and
`fabric gate` reads a report without importing the HTML writer's drawing stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabric.report.html import write_html
    from fabric.report.jsonout import write_json
    from fabric.report.junit import write_junit
    from fabric.report.markdown import write_markdown
    from fabric.report.model import (
        CheckResult,
        Report,
        ReportError,
        exit_code,
        report_from_json,
        report_to_json,
    )
    from fabric.report.terminal import print_terminal

_WHERE = {
    "write_html": "html", "write_json": "jsonout", "write_junit": "junit",
    "write_markdown": "markdown", "print_terminal": "terminal",
    **dict.fromkeys(("CheckResult", "Report", "ReportError", "exit_code", "report_from_json",
                     "report_to_json"), "model"),
}

__all__ = ["CheckResult", "Report", "ReportError", "exit_code", "print_terminal",
           "report_from_json", "report_to_json", "write_html", "write_json", "write_junit",
           "write_markdown"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
