"""Drift from the last gate: the fields of the last report's fingerprint (`fabric.fingerprint`)
that a watch cycle re-reads, compared every cycle, 0/1 per field.

Compared: a twin's `carrier`, `speed_mbps` and `mtu`; a lane's `mtu` and `lldp` (the lane's
neighbours as topology endpoints). The rest of the fingerprint (addresses, GIDs, a twin's
LLDP) is not read by watch and so not compared here: `fabric gate` re-reads all of it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prometheus_client.core import GaugeMetricFamily

from fabric.intent.model import Intent
from fabric.neighbors import endpoint
from fabric.watch import labels as lbl
from fabric.watch.metrics import LINK_LABELS
from fabric.watch.readings import SparkReading, SwitchReading

log = logging.getLogger("fabric.watch")

Fingerprint = Mapping[str, Any]


def load_fingerprint(path: Path) -> Fingerprint | None:
    """The fingerprint of the report at `path`; None (logged) when there is none to use."""
    from fabric.gate import load_report
    from fabric.report.model import ReportError

    try:
        report = load_report(path)
    except ReportError as exc:
        log.warning("no drift from the gate: %s", exc)
        return None
    if not report.fingerprint:
        log.warning("no drift from the gate: %s has no fingerprint", path)
        return None
    return report.fingerprint


def _twin_now(reading: SparkReading, netdev: str) -> dict[str, Any]:
    state = reading.links.get(netdev)
    if state is None:
        return {}
    return {"carrier": state.carrier, "speed_mbps": state.speed_mbps, "mtu": state.mtu}


def _lane_now(intent: Intent, reading: SwitchReading, lane: str) -> dict[str, Any]:
    iface = reading.interface.get(lane)
    if iface is None:
        return {}
    mtu = iface.get("mtu")  # what the fingerprint holds (the switch facts' `mtu`)
    heard = sorted({endpoint(intent, str(r.get("identity", "")), str(r.get("interface-name", "")))
                    for r in reading.neighbors
                    if str(r.get("interface", "")).split(",")[0] == lane})
    return {"mtu": int(str(mtu)) if str(mtu).isdigit() else None, "lldp": heard}


def drift(intent: Intent, then: Fingerprint,
          readings: Mapping[str, SparkReading | SwitchReading]) -> GaugeMetricFamily:
    """`fabric_gate_drift`: 1 where a re-read field differs from the gate's fingerprint."""
    fam = GaugeMetricFamily("fabric_gate_drift", "1 when the field differs from the last "
                            "gate's fingerprint.", labels=(*LINK_LABELS, "field"))
    sparks, lanes = then.get("sparks", {}), then.get("lanes", {})
    for t in lbl.twins(intent):
        reading, was = readings.get(t.spark), sparks.get(f"{t.spark}:{t.twin}")
        if not isinstance(reading, SparkReading) or not isinstance(was, Mapping):
            continue
        labels = ["spark", t.cable, t.spark, t.twin, str(t.rail), t.lane]
        for name, value in _twin_now(reading, t.twin).items():
            if name in was:
                fam.add_metric([*labels, name], float(value != was[name]))
    for lane in lbl.lanes(intent):
        reading, was = readings.get(lane.switch), lanes.get(f"{lane.switch}:{lane.lane}")
        if not isinstance(reading, SwitchReading) or not isinstance(was, Mapping):
            continue
        labels = ["switch", lane.cable, lane.spark, "", "", lane.lane]
        for name, value in _lane_now(intent, reading, lane.lane).items():
            if name in was:
                fam.add_metric([*labels, name], float(value != was[name]))
    return fam
