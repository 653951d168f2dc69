"""``qos/port`` (per-port trust, PFC profile, queue shapers) and ``qos/settings``. Emulated
state only."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..device import Device
from ..errors import unknown_parameter
from .base import Reply, Request, Row, check_args, pick, target_refs, yes
from .props import Ctx, Prop
from .qos_common import QOS, QUEUES, RATE_KEYS, check, format_rate, has, qos_apply, qos_table

PORT, SETTINGS = f"{QOS}/port", f"{QOS}/settings"
_SETTINGS = qos_table(SETTINGS)


def _shaper(rate: Prop[Any]) -> Prop[Any]:
    """``egress-rate-queueN``: the value goes to the port's ``egress_rate[N]``."""
    assert rate.parse is not None
    parse = rate.parse

    def into(ctx: Ctx, prop: str, value: str) -> int:
        bps: int = parse(ctx, prop, value)
        ctx.item.egress_rate[prop[-1]] = bps
        return bps

    return replace(rate, parse=into, attr=None)


_PORT = {k: _shaper(p) if k in RATE_KEYS else p for k, p in qos_table(PORT).items()}

# --- qos/port -------------------------------------------------------------------------------


def port_rows(dev: Device) -> list[Row]:
    state = dev.load()
    links = dev.links()
    lanes = {lane.name: lane for lane in state.lanes}
    rows: list[Row] = []
    for port in state.qos.ports:
        lane = lanes.get(port.name)
        running = (dev.lane_view(lane, links).running if lane is not None
                   else port.name in links or port.name.endswith("-cpu"))
        row = {".id": port.id, "name": port.name, "switch": state.switch.name,
               "profile": port.profile, "map": port.map, "trust-l2": port.trust_l2,
               "trust-l3": port.trust_l3, "tx-manager": port.tx_manager, "pfc": port.pfc}
        for queue in QUEUES:
            if queue in port.egress_rate:
                row[f"egress-rate-queue{queue}"] = format_rate(port.egress_rate[queue])
        row |= {"running": yes(running), "invalid": "false"}
        rows.append(row)
    return rows


def qos_port_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PORT)
        args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
        for port in pick(state.qos.ports, target_refs(req), lambda x: (x.id, x.name)):
            qos_apply(_PORT, dev, state, port, args)
    return Reply()


def qos_port_unset(dev: Device, req: Request) -> Reply:
    """``unset =numbers=… =value-name=egress-rate-queueN``: the queue is not shaped again."""
    with dev.edit() as state:
        check_args(req, (".id", "numbers", "value-name"))
        name = req.args.get("value-name", "")
        if name not in RATE_KEYS or not has(state, PORT, name):
            raise unknown_parameter()
        for port in pick(state.qos.ports, target_refs(req), lambda x: (x.id, x.name)):
            port.egress_rate.pop(name[-1], None)
    return Reply()


# --- qos/settings ---------------------------------------------------------------------------


def settings_rows(dev: Device) -> list[Row]:
    s = dev.load().qos.settings
    return [{"multicast-buffers": s.multicast_buffers, "shared-buffers": s.shared_buffers,
             "lossless-buffers": s.lossless_buffers,
             "lossless-traffic-class": s.lossless_traffic_class, "mirror-profile": "default",
             "wred-threshold": s.wred_threshold}]


def settings_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, SETTINGS, ids=False)
        qos_apply(_SETTINGS, dev, state, state.qos.settings, dict(req.args))
    return Reply()
