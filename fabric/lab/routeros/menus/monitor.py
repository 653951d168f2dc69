"""``/interface/ethernet monitor``: a lane's or the copper port's link as the PHY reports it
(status, negotiated rate and FEC, the module's EEPROM)."""

from __future__ import annotations

from ..device import Device, EtherView, LaneView
from ..state import Ether, Lane
from .base import Reply, Request, Row, check_args, pick, target_refs, yes


def monitor_row(view: LaneView) -> Row:
    lane, result = view.lane, view.negotiated
    row: Row = {"name": lane.name}
    if view.running:
        row |= {
            "status": "link-ok",
            "auto-negotiation": "done" if lane.auto_negotiation else "disabled",
            "rate": f"{result.gbps}Gbps",
            "full-duplex": "true",
            "tx-flow-control": "false",
            "rx-flow-control": "false",
            "fec": result.fec,
        }
    else:  # training: the PHY is at work on a lit cable; else nothing to train with
        autoneg = "incomplete" if view.training else "failed"
        row |= {
            "status": "no-link",
            "auto-negotiation": autoneg if lane.auto_negotiation else "disabled",
        }
    row["advertising"] = ",".join(lane.advertise)
    row["sfp-module-present"] = yes(view.present)
    if view.present:
        row |= {
            "sfp-rx-loss": yes(not view.running and not view.training),
            "sfp-tx-fault": "false",
            "sfp-type": "QSFP56-DD" if lane.cable_gbps >= 400 else "QSFP56",
            "sfp-connector-type": "no-separable-connector",
            "sfp-link-length-copper": "1m",
            "sfp-vendor-name": "Mikrotik",
            "sfp-vendor-part-number": f"DAC-{lane.cable_gbps}G",
            "eeprom-checksum": "good",
        }
    return row


def ether_monitor_row(view: EtherView) -> Row:
    e = view.ether
    row: Row = {"name": e.name}
    if view.running:
        row |= {
            "status": "link-ok",
            "auto-negotiation": "done" if e.auto_negotiation else "disabled",
            "rate": "1Gbps",
            "full-duplex": "true",
            "tx-flow-control": "false",
            "rx-flow-control": "false",
        }
    else:
        row |= {"status": "no-link", "auto-negotiation": "failed" if e.auto_negotiation
                else "disabled"}  # fmt: skip
    row["advertising"] = ",".join(e.advertise)
    return row


def ethernet_monitor(dev: Device, req: Request) -> Reply:
    """``monitor =numbers=X =once=``: one snapshot per lane (without ``once`` also one)."""
    check_args(req, (".id", "numbers", "once", "duration", "interval"))
    state, links = dev.load(), dev.links()
    items: list[Lane | Ether] = [*state.lanes, *state.ethers]
    picked = pick(items, target_refs(req), lambda x: (x.id, x.name))
    rows = [
        monitor_row(dev.lane_view(x, links))
        if isinstance(x, Lane)
        else ether_monitor_row(dev.ether_view(x, links))
        for x in picked
    ]
    if req.proplist is not None:
        rows = [{k: r[k] for k in req.proplist if k in r} for r in rows]
    return Reply(rows=rows)
