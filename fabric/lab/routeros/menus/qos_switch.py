"""``/interface/ethernet/switch`` (the switch chip) and the QoS marking menus: ``qos/profile``,
``qos/map`` and ``qos/map/ip`` (DSCP -> profile). Emulated state only."""

from __future__ import annotations

from ..device import Device
from ..errors import Trap
from ..qos_state import QosMapIp, QosProfile
from ..state import State
from .base import Reply, Request, Row, pick, target_refs, yes
from .props import Ctx
from .qos_common import QOS, SWITCH, check, missing, offloaded, qos_apply, qos_table

PROFILE, MAP, MAP_IP = f"{QOS}/profile", f"{QOS}/map", f"{QOS}/map/ip"

# --- /interface/ethernet/switch -------------------------------------------------------------

#: mirror-source/-target are taken and not kept (the lab mirrors nothing)
_SWITCH = qos_table(SWITCH, mirror_source=None, mirror_target=None)


def switch_rows(dev: Device) -> list[Row]:
    sw = dev.load().switch
    return [{".id": sw.id, "name": sw.name, "type": sw.type, "mirror-source": "none",
             "mirror-target": "none", "l3-hw-offloading": yes(sw.l3_hw_offloading),
             "qos-hw-offloading": yes(sw.qos_hw_offloading), "invalid": "false"}]


def switch_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, SWITCH)
        # in table order, not as given: l3-hw-offloading is read first
        args = {k: req.args[k] for k in _SWITCH if k in req.args}
        for sw in pick([state.switch], target_refs(req), lambda s: (s.id, s.name)):
            qos_apply(_SWITCH, dev, state, sw, args)
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
        row |= {"traffic-class": str(p.traffic_class), "automap": yes(p.automap),
                "default": yes(p.builtin), "dynamic": "false", "inactive": "false",
                "hw-offloaded": offloaded(state)}
        if p.comment:
            row["comment"] = p.comment
        rows.append(row)
    return rows


def _profile_name(ctx: Ctx, prop: str, value: str) -> str:
    p: QosProfile = ctx.item
    if p.builtin and value != p.name:
        raise Trap("failure: cannot rename a built-in profile")
    if value != p.name and ctx.state.qos.profile(value) is not None:
        raise Trap("failure: profile with such name already exists")
    return value


_PROFILE = qos_table(PROFILE, _profile_name)


def profile_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PROFILE, ids=False)
        if not req.args.get("name"):
            raise missing("name")
        if state.qos.profile(req.args["name"]) is not None:
            raise Trap("failure: profile with such name already exists")
        p = QosProfile(id=state.qos.new_id(), name=req.args["name"])
        qos_apply(_PROFILE, dev, state, p, dict(req.args))
        state.qos.profiles.append(p)
    return Reply(ret=p.id)


def profile_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PROFILE)
        args = {k: v for k, v in req.args.items() if k not in (".id", "numbers")}
        for p in pick(state.qos.profiles, target_refs(req), lambda x: (x.id, x.name)):
            old = p.name
            qos_apply(_PROFILE, dev, state, p, args)
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

_MAP_IP = qos_table(MAP_IP)


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


def map_ip_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, MAP_IP, ids=False)
        for arg in ("dscp", "profile"):
            if not req.args.get(arg):
                raise missing(arg)
        m = QosMapIp(id=state.qos.new_id(), dscp="", profile="")
        qos_apply(_MAP_IP, dev, state, m, dict(req.args))
        state.qos.maps_ip.append(m)
    return Reply(ret=m.id)


def map_ip_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, MAP_IP)
        args = {k: v for k, v in req.args.items() if k in _MAP_IP}
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            qos_apply(_MAP_IP, dev, state, m, args)
    return Reply()


def map_ip_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, MAP_IP, ())
        for m in pick(state.qos.maps_ip, target_refs(req), lambda x: (x.id, "")):
            state.qos.maps_ip.remove(m)
    return Reply()
