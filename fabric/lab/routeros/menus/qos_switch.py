"""``/interface/ethernet/switch`` (the switch chip) and the QoS marking menus: ``qos/profile``,
``qos/map`` and ``qos/map/ip`` (DSCP -> profile). Emulated state only."""

from __future__ import annotations

from ..device import Device
from ..errors import Trap
from ..qos_state import QosMapIp, QosProfile
from ..state import State
from .base import Reply, Request, Row, parse_bool, parse_choice, parse_int, pick, target_refs, yes
from .qos_common import QOS, SWITCH, check, missing, offloaded, parse_dscp_list

PROFILE, MAP, MAP_IP = f"{QOS}/profile", f"{QOS}/map", f"{QOS}/map/ip"

# --- /interface/ethernet/switch -------------------------------------------------------------

SWITCH_ARGS = ("l3-hw-offloading", "mirror-source", "mirror-target", "qos-hw-offloading")


def switch_rows(dev: Device) -> list[Row]:
    sw = dev.load().switch
    return [{".id": sw.id, "name": sw.name, "type": sw.type, "mirror-source": "none",
             "mirror-target": "none", "l3-hw-offloading": yes(sw.l3_hw_offloading),
             "qos-hw-offloading": yes(sw.qos_hw_offloading), "invalid": "false"}]


def switch_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, SWITCH, SWITCH_ARGS)
        for sw in pick([state.switch], target_refs(req), lambda s: (s.id, s.name)):
            if "l3-hw-offloading" in req.args:
                sw.l3_hw_offloading = parse_bool("l3-hw-offloading",
                                                 req.args["l3-hw-offloading"])
            if "qos-hw-offloading" in req.args:
                sw.qos_hw_offloading = parse_bool("qos-hw-offloading",
                                                  req.args["qos-hw-offloading"])
    return Reply()


# --- qos/profile ----------------------------------------------------------------------------

PROFILE_ARGS = ("name", "traffic-class", "pcp", "dscp", "comment", "automap")


def profile_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for p in state.qos.profiles:
        row = {".id": p.id, "name": p.name}
        if p.pcp is not None:
            row["pcp"] = str(p.pcp)
        if p.dscp is not None:
            row["dscp"] = str(p.dscp)
        row |= {"traffic-class": str(p.traffic_class), "automap": yes(p.automap),
                "default": yes(p.builtin), "dynamic": "false", "inactive": "false",
                "hw-offloaded": offloaded(state)}
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


def profile_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PROFILE, PROFILE_ARGS, ids=False)
        if not req.args.get("name"):
            raise missing("name")
        if state.qos.profile(req.args["name"]) is not None:
            raise Trap("failure: profile with such name already exists")
        p = QosProfile(id=state.qos.new_id(), name=req.args["name"])
        _profile_args(state, p, dict(req.args))
        state.qos.profiles.append(p)
    return Reply(ret=p.id)


def profile_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PROFILE, PROFILE_ARGS)
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
        check(req, state, PROFILE, ())
        for p in pick(state.qos.profiles, target_refs(req), lambda x: (x.id, x.name)):
            if p.builtin:
                raise Trap("failure: cannot remove a built-in profile")
            if any(m.profile == p.name for m in state.qos.maps_ip) or any(
                    port.profile == p.name for port in state.qos.ports):
                raise Trap(f"failure: profile {p.name} is in use")
            state.qos.profiles.remove(p)
    return Reply()


# --- qos/map and qos/map/ip -----------------------------------------------------------------

MAP_IP_ARGS = ("map", "dscp", "profile", "disabled")


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
                "inactive": "false", "hw-offloaded": offloaded(state),
                "disabled": yes(m.disabled)}
        rows.append(row)
    return rows


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
        check(req, state, MAP_IP, MAP_IP_ARGS, ids=False)
        for arg in ("dscp", "profile"):
            if not req.args.get(arg):
                raise missing(arg)
        m = QosMapIp(id=state.qos.new_id(), dscp="", profile="")
        _map_ip_args(state, m, dict(req.args))
        state.qos.maps_ip.append(m)
    return Reply(ret=m.id)


def map_ip_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, MAP_IP, MAP_IP_ARGS)
        args = {k: v for k, v in req.args.items() if k in MAP_IP_ARGS}
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            _map_ip_args(state, m, args)
    return Reply()


def map_ip_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, MAP_IP, ())
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            state.qos.maps_ip.remove(m)
    return Reply()
