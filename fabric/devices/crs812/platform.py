"""The CRS812's platform data beyond platforms.yaml: its model key and its modelled lanes."""

from __future__ import annotations

from fabric.intent.platforms import SwitchModel, switch_model

#: The model's key in platforms.yaml.
MODEL = "crs812-8ds-2dq-2ddq-rm"


def model() -> SwitchModel:
    """The platforms.yaml data of the CRS812 (its two QSFP56-DD ports)."""
    return switch_model(MODEL)


def lanes() -> list[str]:
    """Every modelled lane: `qsfp56-dd-1-1` .. `qsfp56-dd-2-8`."""
    return model().all_lanes()
