"""The switch's desired state rendered from the intent: each used lane's settings, and the
whole configuration as a RouterOS script (for review and golden tests)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import jinja2

from fabric.devices.crs804.qos import qos_refusal, qos_script
from fabric.intent.model import Intent, LanePlan
from fabric.intent.platforms import at_least, switch_model


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("fabric.devices.crs804", "templates"),
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


@dataclass(frozen=True)
class LaneWant:
    """The settings a used switch lane should have (RouterOS attribute -> value)."""

    name: str
    attrs: dict[str, str]
    cabled_to: str | None


def lane_wants(intent: Intent) -> list[LaneWant]:
    """Each lane the topology uses: forced speed, auto-negotiation, FEC, mtu, l2mtu."""
    sw = intent.switch
    if sw is None:
        return []
    return [LaneWant(lane.name, _lane_attrs(lane, sw.mtu, sw.l2mtu), lane.cabled_to)
            for lane in sw.lanes]


def _lane_attrs(lane: LanePlan, mtu: int, l2mtu: int) -> dict[str, str]:
    return {"speed": lane.speed, "auto-negotiation": "yes" if lane.auto_negotiation else "no",
            "fec-mode": lane.fec_mode, "l2mtu": str(l2mtu), "mtu": str(mtu)}


def render_routeros(intent: Intent, version: str) -> str:
    """The switch's desired state as a RouterOS script (for review and golden tests)."""
    sw = intent.switch
    if sw is None:
        return ""
    refusal = qos_refusal(intent, version) if intent.lossless else None
    lossless = intent.lossless and refusal is None
    return _env().get_template("routeros.rsc.j2").render(
        host=sw.host, model=sw.model, topology=intent.name, lanes=sw.lanes, mtu=sw.mtu,
        l2mtu=sw.l2mtu, bridge=sw.bridge, qos=intent.qos, version=version, refusal=refusal,
        qos_lines=qos_script(intent, version) if lossless else [],
        lossless_tc=lossless and at_least(version,
                                          switch_model(sw.model).qos_lossless_tc_version))
