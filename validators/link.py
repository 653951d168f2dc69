"""link: every cabled twin is up at the profile's speed; switch lanes run as planned."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent, LanePlan
from validators.judge import Findings, cabled_lanes, where
from validators.registry import check, needs

#: What link judges: the twins' state and speed (ip link, ethtool), the switch lanes' state.
NEEDS = needs("link", spark=True, switch=True)


@check("link.twin_up")
def check_twin_up(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that every cabled twin netdev is administratively up and has carrier."""
    for intended, sf in out.twins(intent):
        nd = sf.netdevs.get(intended.netdev)
        expected = {"admin_up": True, "carrier": True}
        if nd is None:
            out.fail(f"{where(intended)} on {intended.link_id}: netdev not present",
                     host=intended.host, link=intended.link_id, expected=expected, actual=None,
                     hint=f"check that the ConnectX-7 driver is loaded on {intended.host} "
                     "(`ip link`, `dmesg | grep mlx5`)")
            continue
        actual = {"admin_up": nd.admin_up, "carrier": nd.carrier}
        if nd.admin_up and nd.carrier:
            out.ok(f"{where(intended)} is up", host=intended.host, link=intended.link_id,
                   expected=expected, actual=actual)
        elif not nd.admin_up:
            out.fail(f"{where(intended)} on {intended.link_id} is administratively down",
                     host=intended.host, link=intended.link_id, expected=expected, actual=actual,
                     hint=f"ip link set dev {intended.netdev} up (and enable it in netplan)")
        else:
            out.fail(f"{where(intended)} on {intended.link_id} has no carrier", host=intended.host,
                     link=intended.link_id, expected=expected, actual=actual,
                     hint=f"check the cable {intended.link_id}: seated at both ends, the peer "
                     "port up; a re-cabled CX-7 may need a reboot")


@check("link.speed")
def check_speed(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each up twin's ethtool speed against the profile's ethtool_speed_mbps."""
    want = intent.profile.ethtool_speed_mbps
    for intended, sf in out.twins(intent):
        nd = sf.netdevs.get(intended.netdev)
        if nd is None or not (nd.admin_up and nd.carrier):
            out.skip(f"{where(intended)} is down: speed not judged (see link.twin_up)",
                     host=intended.host, link=intended.link_id, expected=want)
            continue
        et = sf.ethtool.get(intended.netdev)
        if et is None:
            out.skip(f"{where(intended)}: no ethtool output"
                     + (" (ethtool missing)" if "ethtool" in sf.missing else ""),
                     host=intended.host, link=intended.link_id, expected=want)
            continue
        if et.speed_mbps == want:
            out.ok(f"{where(intended)} negotiated {want} Mb/s", host=intended.host,
                   link=intended.link_id, expected=want, actual=et.speed_mbps)
        else:
            got = "Unknown" if et.speed_mbps is None else f"{et.speed_mbps} Mb/s"
            out.fail(f"{where(intended)} on {intended.link_id} negotiated {got}, "
                     f"expected {want} Mb/s",
                     host=intended.host, link=intended.link_id, expected=want, actual=et.speed_mbps,
                     hint=f"reseat the module/DAC of {intended.link_id} (a badly seated module "
                     "falls back to 100G); on a switch lane check link.switch_lane")


def _lane_fix(lane: LanePlan, wrong: set[str]) -> str:
    parts = []
    if "auto_negotiation" in wrong or "speed" in wrong or "rate" in wrong:
        parts.append(f"auto-negotiation={'yes' if lane.auto_negotiation else 'no'}")
        parts.append(f"speed={lane.speed}")
    if "fec_mode" in wrong:
        parts.append(f"fec-mode={lane.fec_mode}")
    if "disabled" in wrong:
        parts.append("disabled=no")
    if not parts:
        return (f"check the DAC on {lane.name} and the Spark end; "
                f"`/interface/ethernet/monitor {lane.name} once`")
    return f"/interface/ethernet/set {lane.name} " + " ".join(parts)


@check("link.switch_lane")
def check_switch_lane(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cabled switch lane: link-ok at the planned rate, forced speed, autoneg, FEC."""
    for intended, lane, fact in cabled_lanes(intent, out):
        expected = {"status": "link-ok", "rate": f"{lane.gbps}Gbps", "speed": lane.speed,
                    "auto_negotiation": lane.auto_negotiation, "fec_mode": lane.fec_mode,
                    "disabled": False}
        if fact is None:
            out.fail(f"{intended.host}:{lane.name} ({lane.link_id}) is not listed on the switch",
                     host=intended.host, link=lane.link_id, expected=expected, actual=None,
                     hint="is the switch-marvell package installed? `/interface/ethernet print`")
            continue
        actual = {"status": fact.status, "rate": fact.rate, "speed": fact.speed,
                  "auto_negotiation": fact.auto_negotiation, "fec_mode": fact.fec_mode,
                  "disabled": fact.disabled}
        wrong = {k for k, v in expected.items() if actual[k] != v}
        if not wrong:
            out.ok(f"{intended.host}:{lane.name} link-ok at {fact.rate} ({lane.link_id})",
                   host=intended.host, link=lane.link_id, expected=expected, actual=actual)
            continue
        autoneg = "rate" in wrong and bool(fact.auto_negotiation) and not lane.auto_negotiation
        shown = sorted(wrong - {"rate", "auto_negotiation"} if autoneg else wrong)
        why = ", ".join(f"{k} {actual[k]!r} (want {expected[k]!r})" for k in shown)
        if autoneg:
            why = (f"came up at {fact.rate} because auto-negotiation is on (a {lane.gbps}G "
                   "lane must be forced)" + (f"; also {why}" if why else ""))
        out.fail(f"{intended.host}:{lane.name} to {lane.cabled_to}: {why}",
                 host=intended.host, link=lane.link_id,
                 expected={k: expected[k] for k in sorted(wrong)},
                 actual={k: actual[k] for k in sorted(wrong)}, hint=_lane_fix(lane, wrong))
