"""Lane monitor and board sensors: numbers as RouterOS prints them, per channel; nothing made
up where the module reports nothing (a DAC)."""

from __future__ import annotations

from fabric.intent.build import load_intent
from fabric.watch import labels
from fabric.watch.optics import lane_optics, switch_health, values
from tests.conftest import INVENTORY


def test_values_read_routeros_units_and_channel_lists() -> None:
    assert values("35C") == [35.0]
    assert values("-2.104dBm") == [-2.104]
    assert values("-2.1dBm,-2.3dBm,-1.9dBm,-2.0dBm") == [-2.1, -2.3, -1.9, -2.0]
    assert values("") == [] and values(None) == [] and values("n/a") == []


def test_optics_per_channel_and_none_for_a_dac() -> None:
    intent = load_intent("star4", INVENTORY)
    optic = {"name": "qsfp56-dd-1-1", "sfp-module-present": "true", "sfp-temperature": "41C",
             "sfp-rx-power": "-2.1dBm,-2.3dBm", "sfp-tx-power": "-1.0dBm,-1.1dBm"}
    dac = {"name": "qsfp56-dd-2-1", "sfp-module-present": "true"}
    fams = {f.name: f for f in lane_optics(labels.lanes(intent),
                                           {"qsfp56-dd-1-1": optic, "qsfp56-dd-2-1": dac})}
    rx = {(s.labels["lane"], s.labels["channel"]): s.value
          for s in fams["fabric_qsfp_rx_power_dbm"].samples}
    assert rx == {("qsfp56-dd-1-1", "0"): -2.1, ("qsfp56-dd-1-1", "1"): -2.3}
    temps = [(s.labels["cable"], s.value) for s in fams["fabric_qsfp_temperature_celsius"].samples]
    assert temps == [("spark01:p0--crs804:qsfp56-dd-1-1", 41.0)]
    assert len(fams["fabric_qsfp_present"].samples) == 2


def test_health_keeps_the_temperatures_only() -> None:
    fam = switch_health("crs804", [{"name": "cpu-temperature", "value": "47", "type": "C"},
                                   {"name": "fan1-speed", "value": "7320", "type": "RPM"},
                                   {"name": "psu1-state", "value": "ok", "type": ""}])
    assert [(s.labels["sensor"], s.value) for s in fam.samples] == [("cpu-temperature", 47.0)]
