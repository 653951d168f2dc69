"""The shipped alert rules: alerts.yml, rendered from alerts.yml.j2 with `DEFAULTS`; other
windows (a lab test's seconds) are rendered with `render_rules`."""

from __future__ import annotations

from importlib import resources

import jinja2

DEFAULTS: dict[str, str | int] = {"window": "5m", "hold": "1m", "flaps": 3, "pause_per_s": 1000}


def _template() -> str:
    return resources.files("fabric.watch").joinpath("alerts.yml.j2").read_text()


def render_rules(**params: str | int) -> str:
    """alerts.yml.j2 with `params` over `DEFAULTS` (unknown names: ValueError)."""
    unknown = set(params) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown rule parameter(s): {', '.join(sorted(unknown))}")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(_template()).render(**{**DEFAULTS, **params})


def shipped_rules() -> str:
    """The packaged alerts.yml."""
    return resources.files("fabric.watch").joinpath("alerts.yml").read_text()
