"""Sensors: the switch's lanes as the PHY reports them (`/interface/ethernet monitor once`:
module present, QSFP temperature and optical power where the module reports them; a passive
DAC reports neither), its board sensors (`/system/health`: temperatures) and the Sparks' GPU
(nvidia-smi: temperature, power draw).

RouterOS prints `sfp-temperature` as `35C` and the powers as `-2.104dBm`; a multi-lane
module may list one value per channel, comma-separated (each becomes a `channel` label). The
field names follow RouterOS's documentation; the lab's DACs report no optics, so the unit
tests read recorded rows of that shape (not verified on a CRS804's optics)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from prometheus_client.core import GaugeMetricFamily, Metric

from fabric.intent.model import Intent
from fabric.watch import labels as lbl
from fabric.watch.metrics import LINK_LABELS
from fabric.watch.readings import Row, SparkReading, SwitchReading

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(C|dBm|mW)?\s*$")
OPTICS = (("sfp-temperature", "fabric_qsfp_temperature_celsius",
           "QSFP module temperature, as the module reports it."),
          ("sfp-rx-power", "fabric_qsfp_rx_power_dbm", "QSFP receive power per channel."),
          ("sfp-tx-power", "fabric_qsfp_tx_power_dbm", "QSFP transmit power per channel."))


def values(text: object) -> list[float]:
    """`35C`, `-2.1dBm`, `-2.1dBm,-2.3dBm` as numbers; [] when unreadable."""
    out = []
    for part in str(text or "").split(","):
        m = _NUMBER.match(part)
        if m is None:
            return []
        out.append(float(m.group(1)))
    return out


def lane_optics(lanes: Iterable[lbl.LaneLabels], monitor: Mapping[str, Row]) -> list[Metric]:
    """Module present and the optics families (samples only where the module reports them)."""
    optics = {name: GaugeMetricFamily(name, text, labels=(*LINK_LABELS, "channel"))
              for _, name, text in OPTICS}
    present = GaugeMetricFamily("fabric_qsfp_present", "1 when the lane's module is present.",
                                labels=LINK_LABELS)
    for lane in lanes:
        row = monitor.get(lane.lane)
        if row is None:
            continue
        labels = {"side": "switch", "twin": "", "rail": "", **lane.as_labels()}
        keyed = [labels[k] for k in LINK_LABELS]
        if "sfp-module-present" in row:
            present.add_metric(keyed, float(str(row["sfp-module-present"]) in ("true", "yes")))
        for field, name, _ in OPTICS:
            for channel, value in enumerate(values(row.get(field))):
                optics[name].add_metric([*keyed, str(channel)], value)
    return [present, *optics.values()]


def switch_metrics(intent: Intent, readings: Mapping[str, object]) -> list[Metric]:
    """The optics and board sensors of the switch's reading this cycle (none without one)."""
    for reading in readings.values():
        if isinstance(reading, SwitchReading):
            return [*lane_optics(lbl.lanes(intent), reading.monitor),
                    switch_health(reading.host, reading.health)]
    return []


def switch_health(host: str, rows: Iterable[Row]) -> Metric:
    """`/system/health` temperatures (type `C`) as `fabric_switch_temperature_celsius`."""
    fam = GaugeMetricFamily("fabric_switch_temperature_celsius", "The switch's sensors.",
                            labels=("switch", "sensor"))
    for row in rows:
        if str(row.get("type", "")) == "C" and (got := values(row.get("value"))):
            fam.add_metric([host, str(row.get("name", ""))], got[0])
    return fam


def gpu_metrics(readings: Mapping[str, object]) -> list[Metric]:
    """The Sparks' GPU temperature and power draw (nvidia-smi), where reported."""
    temp = GaugeMetricFamily("fabric_gpu_temperature_celsius", "GPU temperature (nvidia-smi).",
                             labels=("spark", "gpu"))
    power = GaugeMetricFamily("fabric_gpu_power_watts", "GPU power draw (nvidia-smi).",
                              labels=("spark", "gpu"))
    for host, reading in sorted(readings.items()):
        if not isinstance(reading, SparkReading):
            continue
        for gpu, (celsius, watts) in sorted(reading.gpus.items()):
            if celsius is not None:
                temp.add_metric([host, gpu], celsius)
            if watts is not None:
                power.add_metric([host, gpu], watts)
    return [temp, power]
