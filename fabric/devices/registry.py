"""Which device drives a host: the Spark, or the switch by its inventory model."""

from __future__ import annotations

from fabric.devices.contract import Device
from fabric.devices.crs804.device import Crs804
from fabric.devices.crs804.model import SwitchChanges
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.crs812.device import Crs812
from fabric.devices.spark.device import Spark
from fabric.devices.spark.model import SparkChanges
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.errors import InputError
from fabric.facts import SparkFacts, SwitchFacts

SparkDevice = Device[SparkFacts, SparkSnapshot, SparkChanges]
SwitchDevice = Device[SwitchFacts, SwitchSnapshot, SwitchChanges]

SPARK: SparkDevice = Spark()
#: Switch model (platforms.yaml key) -> the device that drives it.
SWITCHES: dict[str, SwitchDevice] = {d.platform: d for d in (Crs804(), Crs812())}


def switch_device(model: str) -> SwitchDevice:
    """The device of switch `model`; InputError for a model no device drives."""
    try:
        return SWITCHES[model]
    except KeyError:
        raise InputError(f"no device drives switch model {model!r} (known: "
                         f"{', '.join(sorted(SWITCHES))})") from None
