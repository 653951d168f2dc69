"""Recorded facts and snapshots of a lab star4 (fresh and configured by push)."""

from __future__ import annotations

import json
from pathlib import Path

from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.facts import Facts, facts_from_json
from fabric.intent.build import load_intent
from fabric.intent.model import Intent

HERE = Path(__file__).parent
RECORDED = HERE / "recorded"
INVENTORY = HERE.parents[1] / "inventory"


def lab_intent() -> Intent:
    return load_intent(RECORDED / "star4-lab.yaml", INVENTORY)


def recorded(state: str) -> tuple[Facts, dict[str, SparkSnapshot], SwitchSnapshot]:
    """`state` is "fresh" (lab just built) or "configured" (after `push --apply`)."""
    facts = facts_from_json((RECORDED / f"star4-{state}.facts.json").read_text())
    data = json.loads((RECORDED / f"star4-{state}.snapshots.json").read_text())
    sparks = {h: SparkSnapshot(**s) for h, s in data["sparks"].items()}
    return facts, sparks, SwitchSnapshot(**data["switch"])
