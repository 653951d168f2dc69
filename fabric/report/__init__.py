"""Check results, the report and its writers (JSON, JUnit, Markdown, HTML, terminal)."""

from fabric.report.jsonout import write_json
from fabric.report.model import (
    CheckResult,
    Report,
    ReportError,
    exit_code,
    report_from_json,
    report_to_json,
)
from fabric.report.terminal import print_terminal

__all__ = ["CheckResult", "Report", "ReportError", "exit_code", "print_terminal",
           "report_from_json", "report_to_json", "write_json"]
