"""Render a Plan as a Markdown runbook (jinja2) or JSON."""

from __future__ import annotations

import json
import re

from jinja2 import Environment, PackageLoader, StrictUndefined

from fabric.plan.model import Plan


def _env() -> Environment:
    return Environment(loader=PackageLoader("fabric.plan", "templates"), autoescape=False,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def to_markdown(plan: Plan) -> str:
    """The runbook a person follows, step by step."""
    text = _env().get_template("runbook.md.j2").render(p=plan)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def to_json(plan: Plan) -> str:
    """The plan as JSON (schema fabric.plan/1)."""
    return json.dumps(plan.to_dict(), indent=2) + "\n"
