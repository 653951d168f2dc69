"""How a CRS804 lane comes up: negotiated rate, FEC, and the shaping that stands in for it."""

from __future__ import annotations

from dataclasses import dataclass

from .platform import AUTONEG_OK_GBPS, FEC91_MIN_GBPS, LINK_MODES
from .state import Lane

# A lane left on auto-negotiation with a cable slower than 400G trains at this rate (field report).
AUTONEG_FALLBACK_GBPS = 100


@dataclass(frozen=True)
class Negotiated:
    """What the PHY would settle on, from configuration and cable alone (ignoring the kernel)."""

    link: bool
    gbps: int = 0
    fec: str = "off"
    reason: str = ""


def negotiate(lane: Lane) -> Negotiated:
    """Rate and FEC for the lane's settings over its cable; ``link=False`` if it cannot train."""
    cable = lane.cable_gbps
    if cable <= 0:
        return Negotiated(False, reason="no module")
    if lane.auto_negotiation:
        gbps = cable if cable >= AUTONEG_OK_GBPS else min(cable, AUTONEG_FALLBACK_GBPS)
    else:
        gbps = LINK_MODES.get(lane.speed, 0)
        if gbps > cable or gbps == 0:
            return Negotiated(False, reason="speed above cable capability")
    if gbps >= FEC91_MIN_GBPS:
        if lane.fec_mode not in ("auto", "fec91"):
            return Negotiated(False, reason=f"{gbps}G needs fec91")
        return Negotiated(True, gbps, "fec91")
    fec = "fec91" if lane.fec_mode == "auto" and gbps >= 100 else lane.fec_mode
    return Negotiated(True, gbps, "off" if fec == "auto" else fec)


def shaping_mbit(lane: Lane, line_rate_mbit: int) -> int | None:
    """tbf rate that makes the lab link as much slower as the lane is below its cable, or None."""
    result = negotiate(lane)
    if not result.link or result.gbps >= lane.cable_gbps:
        return None
    return max(1, line_rate_mbit * result.gbps // lane.cable_gbps)

