"""``/interface/ethernet/switch`` and its ``qos`` menus (Marvell Prestera switch chips).

What the MikroTik manual "Quality of Service" and its CLI reference describe for the CRS804's
98DX7335: QoS profiles, the DSCP map (``qos/map/ip``), per-port trust and PFC
(``qos/port``), the default tx-manager's queues (schedule, weight, ECN), PFC profiles
(``qos/priority-flow-control``), the QoS settings (7.23+: ``lossless-traffic-class``) and
``qos-hw-offloading`` on the switch chip.

Every item is **emulated state**: the kernel of the lab has no QoS, so nothing here changes a
netdev or a frame. Menus and attributes follow the version the switch reports
(``platform.QOS_*_SINCE``): a menu the version lacks is answered like RouterOS answers an
unknown path (``no such command prefix``), an attribute it lacks with ``unknown parameter``.
Not modelled: the manual says new-generation chips keep ``qos-hw-offloading=yes`` whatever is
asked; here it reads back what was set. Error texts the manual and field reports do not give
(a profile in use, a built-in one) are the emulator's own wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..device import Device
from ..errors import CATEGORY_ARGUMENT, Trap, no_match, unknown_parameter
from ..platform import QOS_LOSSLESS_SINCE, QOS_MARKING_SINCE, QOS_SINCE, version_tuple
from ..state import PfcProfile, QosMapIp, QosPort, QosProfile, State, TxQueue
from .base import (
    Menu,
    Reply,
    Request,
    Row,
    check_args,
    parse_bool,
    parse_choice,
    parse_int,
    pick,
    print_reply,
    target_refs,
    yes,
)

SWITCH, QOS = "/interface/ethernet/switch", "/interface/ethernet/switch/qos"
TRUST = ("ignore", "trust", "keep")
SCHEDULES = ("strict-priority", "low-priority-group", "high-priority-group")
WRED_THRESHOLDS = ("low", "medium", "high")
QUEUES = tuple(str(n) for n in range(8))
RATE_KEYS = tuple(f"egress-rate-queue{n}" for n in QUEUES)
_RATE = re.compile(r"^(\d+(?:\.\d+)?)([kKMG]?)(?:bps)?$")
_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}


def since(state: State, version: tuple[int, ...]) -> bool:
    return version_tuple(state.version)[:2] >= version


def _allowed(state: State, always: tuple[str, ...], **gated: tuple[int, ...]) -> list[str]:
    """Argument names this version takes: `always` plus each gated one (``a_b`` = ``a-b``)
    from its version on."""
    return [*always, *(k.replace("_", "-") for k, v in gated.items() if since(state, v))]


def _check(req: Request, state: State, always: tuple[str, ...], **gated: tuple[int, ...]
           ) -> None:
    check_args(req, _allowed(state, always, **gated))


def parse_rate(prop: str, text: str, maximum: int) -> int:
    """``10G``, ``10.0Gbps``, ``100M``, ``0`` -> bit/s; above the chip's shaper: a failure."""
    m = _RATE.match(text.strip())
    if m is None:
        raise Trap(f"invalid value for argument {prop}", CATEGORY_ARGUMENT)
    bps = int(float(m.group(1)) * _UNITS[m.group(2)])
    if bps > maximum:
        raise Trap(f"failure: max bit rate is {format_rate(maximum).replace('.0Gbps', 'G')}")
    return bps


def format_rate(bps: int) -> str:
    """bit/s as RouterOS prints a rate: ``10.0Gbps``, ``100.0Mbps``, ``0``."""
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if bps and bps % size == 0:
            return f"{bps / size:.1f}{unit}bps"
    return str(bps)


def parse_classes(prop: str, text: str) -> str:
    """A list of traffic classes 0..7 (``3`` or ``3,4``), normalised."""
    out = sorted({parse_int(prop, part, 0, 7) for part in text.split(",") if part})
    if not out:
        raise no_match(prop)
    return ",".join(str(n) for n in out)


def parse_dscp_list(prop: str, text: str) -> str:
    """DSCP values and ranges 0..63 (``26``, ``1,3-4``), kept as written when valid."""
    for part in text.split(","):
        low, _, high = part.partition("-")
        parse_int(prop, low, 0, 63)
        if high:
            parse_int(prop, high, 0, 63)
    if not text:
        raise no_match(prop)
    return text


def dscp_values(text: str) -> list[int]:
    """``1,3-4`` -> [1, 3, 4]."""
    out: list[int] = []
    for part in text.split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def _missing(arg: str) -> Trap:
    return Trap(f"missing value(s) of argument(s) {arg}")


def _offloaded(state: State) -> str:
    return yes(state.switch.qos_hw_offloading)


# --- /interface/ethernet/switch -------------------------------------------------------------


def switch_rows(dev: Device) -> list[Row]:
    state = dev.load()
    sw = state.switch
    row = {".id": sw.id, "name": sw.name, "type": sw.type, "mirror-source": "none",
           "mirror-target": "none", "l3-hw-offloading": yes(sw.l3_hw_offloading)}
    if since(state, QOS_SINCE):
        row["qos-hw-offloading"] = yes(sw.qos_hw_offloading)
    row["invalid"] = "false"
    return [row]


def switch_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", "l3-hw-offloading", "mirror-source",
                            "mirror-target"), qos_hw_offloading=QOS_SINCE)
        for sw in pick([state.switch], target_refs(req), lambda s: (s.id, s.name)):
            if "l3-hw-offloading" in req.args:
                sw.l3_hw_offloading = parse_bool("l3-hw-offloading",
                                                 req.args["l3-hw-offloading"])
            if "qos-hw-offloading" in req.args:
                sw.qos_hw_offloading = parse_bool("qos-hw-offloading",
                                                  req.args["qos-hw-offloading"])
    return Reply()


# --- qos/profile ----------------------------------------------------------------------------


def profile_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for p in state.qos.profiles:
        row = {".id": p.id, "name": p.name}
        if p.pcp is not None:
            row["pcp"] = str(p.pcp)
        if p.dscp is not None:
            row["dscp"] = str(p.dscp)
        row["traffic-class"] = str(p.traffic_class)
        if since(state, QOS_LOSSLESS_SINCE):
            row["automap"] = yes(p.automap)
        row |= {"default": yes(p.builtin), "dynamic": "false", "inactive": "false",
                "hw-offloaded": _offloaded(state)}
        if p.comment:
            row["comment"] = p.comment
        rows.append(row)
    return rows


def _profile_args(state: State, p: QosProfile, args: dict[str, str]) -> None:
    for key, text in args.items():
        if key == "name":
            if p.builtin and text != p.name:
                raise Trap("failure: cannot rename a built-in profile")
            if text != p.name and state.qos.profile(text) is not None:
                raise Trap("failure: profile with such name already exists")
            p.name = text
        elif key == "traffic-class":
            p.traffic_class = parse_int(key, text, 0, 7)
        elif key == "pcp":
            p.pcp = parse_int(key, text, 0, 7)
        elif key == "dscp":
            p.dscp = parse_int(key, text, 0, 63)
        elif key == "automap":
            p.automap = parse_bool(key, text)
        elif key == "comment":
            p.comment = text


PROFILE_ARGS = ("name", "traffic-class", "pcp", "dscp", "comment")


def profile_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, PROFILE_ARGS, automap=QOS_LOSSLESS_SINCE)
        if not req.args.get("name"):
            raise _missing("name")
        if state.qos.profile(req.args["name"]) is not None:
            raise Trap("failure: profile with such name already exists")
        p = QosProfile(id=state.qos.new_id(), name=req.args["name"])
        _profile_args(state, p, dict(req.args))
        state.qos.profiles.append(p)
    return Reply(ret=p.id)


def profile_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", *PROFILE_ARGS), automap=QOS_LOSSLESS_SINCE)
        args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
        for p in pick(state.qos.profiles, target_refs(req), lambda x: (x.id, x.name)):
            old = p.name
            _profile_args(state, p, args)
            if p.name != old:
                _rename_profile(state, old, p.name)
    return Reply()


def _rename_profile(state: State, old: str, new: str) -> None:
    for m in state.qos.maps_ip:
        m.profile = new if m.profile == old else m.profile
    for port in state.qos.ports:
        port.profile = new if port.profile == old else port.profile


def profile_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers"))
        for p in pick(state.qos.profiles, target_refs(req), lambda x: (x.id, x.name)):
            if p.builtin:
                raise Trap("failure: cannot remove a built-in profile")
            if any(m.profile == p.name for m in state.qos.maps_ip) or any(
                    port.profile == p.name for port in state.qos.ports):
                raise Trap(f"failure: profile {p.name} is in use")
            state.qos.profiles.remove(p)
    return Reply()


# --- qos/map and qos/map/ip -----------------------------------------------------------------


def map_rows(dev: Device) -> list[Row]:
    return [{".id": "*1", "name": "default", "default": "true", "dynamic": "false"}]


def map_ip_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for m in state.qos.maps_ip:
        row = {".id": m.id}
        if m.map:
            row["map"] = m.map
        row |= {"dscp": m.dscp, "profile": m.profile, "default": "false", "dynamic": "false",
                "inactive": "false", "hw-offloaded": _offloaded(state),
                "disabled": yes(m.disabled)}
        rows.append(row)
    return rows


MAP_IP_ARGS = ("map", "dscp", "profile", "disabled")


def _map_ip_args(state: State, m: QosMapIp, args: dict[str, str]) -> None:
    for key, text in args.items():
        if key == "dscp":
            m.dscp = parse_dscp_list(key, text)
        elif key == "profile":
            m.profile = parse_choice(key, text, [p.name for p in state.qos.profiles])
        elif key == "map":
            m.map = parse_choice(key, text, ["default"])
        elif key == "disabled":
            m.disabled = parse_bool(key, text)


def map_ip_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, MAP_IP_ARGS)
        for arg in ("dscp", "profile"):
            if not req.args.get(arg):
                raise _missing(arg)
        m = QosMapIp(id=state.qos.new_id(), dscp="", profile="")
        _map_ip_args(state, m, dict(req.args))
        state.qos.maps_ip.append(m)
    return Reply(ret=m.id)


def map_ip_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", *MAP_IP_ARGS))
        args = {k: v for k, v in req.args.items() if k in MAP_IP_ARGS}
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            _map_ip_args(state, m, args)
    return Reply()


def map_ip_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers"))
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            state.qos.maps_ip.remove(m)
    return Reply()


# --- qos/tx-manager and its queues ----------------------------------------------------------


def tx_manager_rows(dev: Device) -> list[Row]:
    return [{".id": "*1", "name": "default", "queue-buffers": "auto", "default": "true"}]


def queue_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for q in state.qos.tx_queues:
        row = {".id": q.id, "tx-manager": q.tx_manager, "traffic-class": str(q.traffic_class),
               "schedule": q.schedule}
        if q.schedule != "strict-priority":
            row["weight"] = str(q.weight)
        ecn_actual = q.ecn and q.use_shared_buffers
        row |= {"queue-buffers": q.queue_buffers,
                "use-shared-buffers": yes(q.use_shared_buffers), "wred": yes(q.wred),
                "ecn": yes(q.ecn), "wred-actual": yes(q.wred and q.use_shared_buffers),
                "ecn-actual": yes(ecn_actual), "default": "false", "inactive": "false",
                "hw-offloaded": _offloaded(state)}
        rows.append(row)
    return rows


QUEUE_ARGS = ("schedule", "weight", "use-shared-buffers", "wred", "ecn", "queue-buffers")


def queue_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", *QUEUE_ARGS))
        for q in pick(state.qos.tx_queues, target_refs(req), lambda x: (x.id, "")):
            _queue_args(q, req)
    return Reply()


def _queue_args(q: TxQueue, req: Request) -> None:
    for key, text in req.args.items():
        if key == "schedule":
            q.schedule = parse_choice(key, text, SCHEDULES)
        elif key == "weight":
            q.weight = parse_int(key, text, 1, 255)
        elif key == "use-shared-buffers":
            q.use_shared_buffers = parse_bool(key, text)
        elif key == "wred":
            q.wred = parse_bool(key, text)
        elif key == "ecn":
            q.ecn = parse_bool(key, text)
        elif key == "queue-buffers":
            q.queue_buffers = text


# --- qos/priority-flow-control --------------------------------------------------------------


def pfc_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for p in state.qos.pfc:
        row = {".id": p.id, "name": p.name}
        if not p.builtin:
            row |= {"traffic-class": p.traffic_class, "rx": yes(p.rx), "tx": yes(p.tx),
                    "pause-threshold": p.pause_threshold,
                    "resume-threshold": p.resume_threshold}
        row |= {"default": yes(p.builtin), "disabled": "false", "inactive": "false",
                "hw-offloaded": _offloaded(state)}
        rows.append(row)
    return rows


PFC_ARGS = ("name", "traffic-class", "rx", "tx", "pause-threshold", "resume-threshold")


def _pfc_args(state: State, p: PfcProfile, args: dict[str, str]) -> None:
    if p.builtin:
        raise Trap("failure: cannot change the built-in profile")
    for key, text in args.items():
        if key == "name":
            if text != p.name and state.qos.pfc_profile(text) is not None:
                raise Trap("failure: profile with such name already exists")
            p.name = text
        elif key == "traffic-class":
            p.traffic_class = parse_classes(key, text)
        elif key in ("rx", "tx"):
            setattr(p, key, parse_bool(key, text))
        elif key == "pause-threshold":
            p.pause_threshold = text
        elif key == "resume-threshold":
            p.resume_threshold = text


def pfc_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, PFC_ARGS)
        for arg in ("name", "traffic-class"):
            if not req.args.get(arg):
                raise _missing(arg)
        if state.qos.pfc_profile(req.args["name"]) is not None:
            raise Trap("failure: profile with such name already exists")
        p = PfcProfile(id=state.qos.new_id(), name=req.args["name"])
        _pfc_args(state, p, dict(req.args))
        state.qos.pfc.append(p)
    return Reply(ret=p.id)


def pfc_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", *PFC_ARGS))
        args = {k: v for k, v in req.args.items() if k in PFC_ARGS}
        for p in pick(state.qos.pfc, target_refs(req), lambda x: (x.id, x.name)):
            old = p.name
            _pfc_args(state, p, args)
            for port in state.qos.ports:
                port.pfc = p.name if port.pfc == old else port.pfc
    return Reply()


def pfc_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers"))
        for p in pick(state.qos.pfc, target_refs(req), lambda x: (x.id, x.name)):
            if p.builtin:
                raise Trap("failure: cannot remove the built-in profile")
            if any(port.pfc == p.name for port in state.qos.ports):
                raise Trap(f"failure: profile {p.name} is in use")
            state.qos.pfc.remove(p)
    return Reply()


# --- qos/port -------------------------------------------------------------------------------


def port_rows(dev: Device) -> list[Row]:
    state = dev.load()
    links = dev.links()
    lanes = {lane.name: lane for lane in state.lanes}
    full = since(state, QOS_SINCE)
    rows: list[Row] = []
    for port in state.qos.ports:
        lane = lanes.get(port.name)
        running = (dev.lane_view(lane, links).running if lane is not None
                   else port.name in links or port.name.endswith("-cpu"))
        row = {".id": port.id, "name": port.name, "switch": state.switch.name,
               "profile": port.profile, "map": port.map, "trust-l2": port.trust_l2,
               "trust-l3": port.trust_l3}
        if full:
            row |= {"tx-manager": port.tx_manager, "pfc": port.pfc}
            for queue in QUEUES:
                if queue in port.egress_rate:
                    row[f"egress-rate-queue{queue}"] = format_rate(port.egress_rate[queue])
        row |= {"running": yes(running), "invalid": "false"}
        rows.append(row)
    return rows


PORT_ARGS = ("profile", "map", "trust-l2", "trust-l3")


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


def _port_gates(state: State) -> dict[str, tuple[int, ...]]:
    return {"tx_manager": QOS_SINCE, "pfc": QOS_SINCE,
            **{k.replace("-", "_"): QOS_SINCE for k in RATE_KEYS}}


def qos_port_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, (".id", "numbers", *PORT_ARGS), **_port_gates(state))
        args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
        for port in pick(state.qos.ports, target_refs(req), lambda x: (x.id, x.name)):
            _port_args(dev, state, port, args)
    return Reply()


def qos_port_unset(dev: Device, req: Request) -> Reply:
    """``unset =numbers=… =value-name=egress-rate-queueN``: the queue is not shaped again."""
    with dev.edit() as state:
        check_args(req, (".id", "numbers", "value-name"))
        name = req.args.get("value-name", "")
        if name not in _allowed(state, (), **_port_gates(state)) or name not in RATE_KEYS:
            raise unknown_parameter()
        for port in pick(state.qos.ports, target_refs(req), lambda x: (x.id, x.name)):
            port.egress_rate.pop(name[-1], None)
    return Reply()


# --- qos/settings ---------------------------------------------------------------------------


def settings_rows(dev: Device) -> list[Row]:
    state = dev.load()
    s = state.qos.settings
    row = {"multicast-buffers": s.multicast_buffers, "shared-buffers": s.shared_buffers}
    if since(state, QOS_LOSSLESS_SINCE):
        row |= {"lossless-buffers": s.lossless_buffers,
                "lossless-traffic-class": s.lossless_traffic_class}
    row |= {"mirror-profile": "default", "wred-threshold": s.wred_threshold}
    return [row]


def settings_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        _check(req, state, ("multicast-buffers", "shared-buffers", "wred-threshold"),
               lossless_buffers=QOS_LOSSLESS_SINCE, lossless_traffic_class=QOS_LOSSLESS_SINCE)
        s = state.qos.settings
        for key, text in req.args.items():
            if key == "lossless-traffic-class":
                s.lossless_traffic_class = "auto" if text == "auto" else parse_classes(key,
                                                                                       text)
            elif key == "wred-threshold":
                s.wred_threshold = parse_choice(key, text, WRED_THRESHOLDS)
            else:
                setattr(s, key.replace("-", "_"), text)
    return Reply()


# --- registry -------------------------------------------------------------------------------


def _printer(rows: Callable[[Device], list[Row]]) -> Callable[[Device, Request], Reply]:
    def handler(dev: Device, req: Request) -> Reply:
        return print_reply(rows(dev), req)

    return handler


def _list(rows: Callable[[Device], list[Row]], **more: Callable[[Device, Request], Reply]
          ) -> dict[str, Callable[[Device, Request], Reply]]:
    return {"print": _printer(rows), "getall": _printer(rows), **more}


MENUS = (
    Menu(SWITCH, _list(switch_rows, set=switch_set)),
    Menu(f"{QOS}/profile", _list(profile_rows, add=profile_add, set=profile_set,
                                 remove=profile_remove), QOS_MARKING_SINCE),
    Menu(f"{QOS}/map", _list(map_rows), QOS_MARKING_SINCE),
    Menu(f"{QOS}/map/ip", _list(map_ip_rows, add=map_ip_add, set=map_ip_set,
                                remove=map_ip_remove), QOS_MARKING_SINCE),
    Menu(f"{QOS}/port", _list(port_rows, set=qos_port_set, unset=qos_port_unset),
         QOS_MARKING_SINCE),
    Menu(f"{QOS}/tx-manager", _list(tx_manager_rows), QOS_SINCE),
    Menu(f"{QOS}/tx-manager/queue", _list(queue_rows, set=queue_set), QOS_SINCE),
    Menu(f"{QOS}/priority-flow-control", _list(pfc_rows, add=pfc_add, set=pfc_set,
                                               remove=pfc_remove), QOS_SINCE),
    Menu(f"{QOS}/settings", _list(settings_rows, set=settings_set), QOS_SINCE),
)
