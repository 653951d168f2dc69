"""switch: every Spark-facing lane is a port of the one hardware-offloaded bridge."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent
from validators.judge import Findings, cabled_lanes
from validators.registry import check, needs

#: What switch judges: the switch's bridges and their ports.
NEEDS = needs("switch", switch=True)


@check("switch.bridge")
def check_bridge(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cabled lane: in the planned bridge, with hardware offload on."""
    sw = facts.switch
    for intended, lane, fact in cabled_lanes(intent, out):
        assert sw is not None
        ports = {p for b in sw.bridges if b.name == intended.bridge for p in b.ports}
        bridge = fact.bridge if fact and fact.bridge else (intended.bridge if lane.name in ports
                                                           else None)
        hw = fact.hw_offload if fact else None
        expected = {"bridge": intended.bridge, "hw_offload": True}
        actual = {"bridge": bridge, "hw_offload": hw}
        if bridge == intended.bridge and hw is True:
            out.ok(f"{intended.host}:{lane.name} in bridge {bridge}, hw offload on",
                   host=intended.host, link=lane.link_id, expected=expected, actual=actual)
            continue
        if bridge != intended.bridge:
            what = f"is in bridge {bridge}" if bridge else "is in no bridge"
            fix = (f"/interface/bridge/port add bridge={intended.bridge} interface={lane.name} "
                   "hw=yes" if bridge is None else
                   f"/interface/bridge/port set [find interface={lane.name}] "
                   f"bridge={intended.bridge} hw=yes")
        else:
            what = "has hardware offload off (the switch CPU forwards it)"
            fix = f"/interface/bridge/port set [find interface={lane.name}] hw=yes"
        out.fail(f"{intended.host}:{lane.name} to {lane.cabled_to} ({lane.link_id}) {what}; "
                 f"expected bridge {intended.bridge} with hw offload", host=intended.host,
                 link=lane.link_id, expected=expected, actual=actual, hint=fix)
