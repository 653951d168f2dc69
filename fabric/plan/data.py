"""Planner parameters as data: durations, gate families, alpha-beta model, synth defaults."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml


@cache
def load(name: str) -> dict[str, Any]:
    """One of the planner's YAML files (`plan`, `alpha_beta`, `synth`) as a mapping."""
    text = resources.files("fabric.plan").joinpath(f"{name}.yaml").read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def duration(what: str) -> float:
    """Estimated minutes for one unit of `what` (plan.yaml durations_min)."""
    return float(load("plan")["durations_min"][what])


def gate_families(what: str) -> tuple[str, ...]:
    """The `fabric validate --only` families a gate of kind `what` runs."""
    return tuple(load("plan")["gates"][what])
