"""Check results, the report and its writers (JSON, JUnit, Markdown, HTML, terminal)."""

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

__all__ = ["CheckResult", "Report", "ReportError", "exit_code", "print_terminal",
           "report_from_json", "report_to_json", "write_html", "write_json", "write_junit",
           "write_markdown"]
