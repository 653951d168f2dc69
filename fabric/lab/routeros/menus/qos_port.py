"""``qos/port`` (per-port trust, PFC profile, queue shapers) and ``qos/settings``. Emulated
state only."""

from __future__ import annotations

from ..device import Device
from ..errors import unknown_parameter
from ..qos_state import QosPort
from ..state import State
from .base import Reply, Request, Row, check_args, parse_choice, pick, target_refs, yes
from .qos_common import (
    QOS,
    QUEUES,
    RATE_KEYS,
    TRUST,
    WRED_THRESHOLDS,
    check,
    format_rate,
    has,
    parse_classes,
    parse_rate,
)

PORT, SETTINGS = f"{QOS}/port", f"{QOS}/settings"
PORT_ARGS = ("profile", "map", "trust-l2", "trust-l3", "tx-manager", "pfc", *RATE_KEYS)
SETTINGS_ARGS = ("multicast-buffers", "shared-buffers", "wred-threshold", "lossless-buffers",
                 "lossless-traffic-class")

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


def _port_args(dev: Device, state: State, port: QosPort, args: dict[str, str]) -> None:
    for key, text in args.items():
        if key == "profile":
            port.profile = parse_choice(key, text, [p.name for p in state.qos.profiles])
        elif key == "map":
            port.map = parse_choice(key, text, ["default"])
        elif key == "trust-l2":
            port.trust_l2 = parse_choice(key, text, TRUST)
        elif key == "trust-l3":
            port.trust_l3 = parse_choice(key, text, TRUST)
        elif key == "tx-manager":
            port.tx_manager = parse_choice(key, text, ["default", "offline"])
        elif key == "pfc":
            port.pfc = parse_choice(key, text, [p.name for p in state.qos.pfc])
        elif key in RATE_KEYS:
            port.egress_rate[key[-1]] = parse_rate(key, text, dev.platform.max_egress_rate_bps)


def qos_port_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PORT, PORT_ARGS)
        args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
        for port in pick(state.qos.ports, target_refs(req), lambda x: (x.id, x.name)):
            _port_args(dev, state, port, args)
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
        check(req, state, SETTINGS, SETTINGS_ARGS, ids=False)
        s = state.qos.settings
        for key, text in req.args.items():
            if key == "lossless-traffic-class":
                s.lossless_traffic_class = ("auto" if text == "auto"
                                            else parse_classes(key, text))
            elif key == "wred-threshold":
                s.wred_threshold = parse_choice(key, text, WRED_THRESHOLDS)
            else:
                setattr(s, key.replace("-", "_"), text)
    return Reply()
