"""The switch's half of intent minus facts: the RouterOS API calls that make the used lanes,
the offloaded bridge and its ports, LLDP and (lossless) the QoS match the intent, and why the
switch must not be changed as it is."""

from __future__ import annotations

from fabric.devices.crs804 import qos
from fabric.devices.crs804.model import ApiCall, Attr, SwitchChanges
from fabric.devices.crs804.platform import FABRIC_LANE, QUEUE
from fabric.devices.crs804.render import lane_wants
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.facts import SwitchFacts
from fabric.intent.model import Intent
from fabric.intent.platforms import at_least, roce_qos, switch_model


def diff_switch(intent: Intent, facts: SwitchFacts, snap: SwitchSnapshot,
                qos_sparks: set[str] | None = None) -> SwitchChanges:
    """API calls for the used lanes, the offloaded bridge and its ports, LLDP, and (topology
    `qos: lossless`) the switch's QoS, with port QoS on the lanes of `qos_sparks` (None: every
    cabled lane)."""
    sw = intent.switch
    assert sw is not None
    calls: list[ApiCall] = []
    touched: list[str] = []
    bounced: list[str] = []
    for want in lane_wants(intent):
        attrs = [Attr(k, old, v) for k, v in want.attrs.items()
                 if (old := _lane_value(facts, snap, want.name, k)) != v]
        if attrs:
            calls.append(ApiCall("/interface/ethernet", "set", want.name, tuple(attrs)))
            touched.append(want.name)
            if any(a.key in ("speed", "auto-negotiation", "fec-mode") for a in attrs):
                bounced.append(want.name)
    refusals = switch_refusals(sw.host, sw.bridge, snap, touched)
    if snap.row("/interface/bridge", name=sw.bridge) is None:
        calls.append(ApiCall("/interface/bridge", "add", None, (Attr("name", None, sw.bridge),)))
    for want in lane_wants(intent):
        if want.cabled_to:
            calls += _port_calls(snap, sw.bridge, want.name)
    calls += _discovery_calls(snap)
    notes: list[str] = []
    if intent.lossless:
        calls += _switch_qos(intent, facts, snap, qos_sparks, notes, refusals)
    else:
        notes.append("qos: lossy: the switch's QoS and LLDP DCBX are left as they are")
    return SwitchChanges(host=sw.host, version=facts.version, calls=tuple(calls),
                          touched_lanes=tuple(touched), bridge=sw.bridge,
                          warnings=_bounce_warnings(intent, bounced), notes=tuple(notes),
                          bounced=tuple(bounced), refused="; ".join(refusals) or None)


def switch_refusals(host: str, bridge: str, snap: SwitchSnapshot,
                    touched: list[str]) -> list[str]:
    """Why the switch must not be changed as it is: its management address on the fabric
    bridge (the factory default of CRS switches), this API session riding on a port push
    changes, or another bridge where ours would be a second one (not hardware-offloaded)."""
    out: list[str] = []
    ports = [r for r in snap.rows.get("/interface/bridge/port", [])
             if r.get("bridge") == bridge]
    on_bridge = snap.addresses_on(bridge)
    if on_bridge:
        mgmt = next((r["interface"] for r in ports
                     if not r.get("interface", "").startswith(FABRIC_LANE)), "ether1")
        out.append(
            f"the management address {', '.join(on_bridge)} is on `{bridge}`, the fabric "
            f"bridge of this topology (the factory default of a CRS switch). Fabric and "
            f"management traffic would share the one hardware-offloaded bridge, and changing "
            f"its ports could cut the management session. Move the address to the management "
            f"port outside the bridge first, from a session on {mgmt} in Safe Mode (Ctrl+X) "
            f"or from the serial console, as ONE command line: "
            f"/interface/bridge/port/remove [find interface={mgmt}]; "
            f"/ip/address/set [find interface={bridge}] interface={mgmt} "
            f"-- then run push again. Do not create a second bridge for the fabric: only one "
            f"bridge per switch chip is hardware-offloaded")
    conn = snap.connected_interface
    if conn is not None and not on_bridge and (
            conn in touched or any(r.get("interface") == conn for r in ports)):
        out.append(f"this API session comes in on {snap.session_address} ({conn}), which push "
                   "would change: reach the switch through its management port")
    others = [r.get("name", "") for r in snap.rows.get("/interface/bridge", [])
              if r.get("name") != bridge]
    if others and snap.row("/interface/bridge", name=bridge) is None:
        out.append(f"the switch already has bridge {', '.join(others)} and the topology names "
                   f"`{bridge}`: a second bridge would not be hardware-offloaded (one per "
                   f"switch chip). Set `switch: bridge: {others[0]}` in the topology")
    return [f"{host}: {r}" for r in out]


def _switch_qos(intent: Intent, facts: SwitchFacts, snap: SwitchSnapshot,
                qos_sparks: set[str] | None, notes: list[str], refusals: list[str]
                ) -> list[ApiCall]:
    """The lossless profile's calls for the version the switch reports (a refusal below the
    minimum, or when its QoS menus could not be read), port QoS only on ready lanes."""
    sw = intent.switch
    assert sw is not None
    refusal = qos.qos_refusal(intent, facts.version)
    if refusal is None and snap.qos_error is not None:
        refusal = (f"qos: lossless: the QoS menus of {sw.host} could not be read "
                   f"({snap.qos_error}); nothing is changed on any host")
    if refusal is not None:
        refusals.append(f"{sw.host}: {refusal}")
        return []
    cabled = {lp.name: lp.cabled_to for lp in sw.lanes if lp.cabled_to}
    lanes = [n for n, h in cabled.items() if qos_sparks is None or h in qos_sparks]
    left = sorted(f"{n} ({h})" for n, h in cabled.items() if n not in lanes)
    tc = at_least(facts.version, switch_model(sw.model).qos_lossless_tc_version)
    notes.append(f"qos: lossless on RouterOS {facts.version}: "
                 + ("QoS profiles with automap and the lossless traffic class (7.23+)" if tc
                    else "QoS profile, DSCP map, port and PFC menus (7.15-7.22)"))
    if left:
        notes.append(f"qos: lossless: port QoS left as it is on {', '.join(left)}: its Spark "
                     "is not part of this push or cannot take its half (both ends or neither)")
    absent: list[str] = []
    calls = qos.switch_qos_calls(intent, facts.version, snap.rows, lanes, absent)
    if bad := qos.table_refusals(calls):
        refusals.append(f"{sw.host}: the lossless recipe (platforms.yaml roce_qos) sets what "
                        f"RouterOS refuses: {'; '.join(bad)}; nothing is changed on any host")
        return []
    for where in absent:
        prop = where.rsplit(": ", 1)[-1]
        cost = roce_qos().absent_costs.get(prop, "the recipe's setting is left to the chip")
        notes.append(f"qos: lossless: {where} is not a property of this switch (its own row "
                     f"lacks it): not sent; {cost}")
    if any(c.path == QUEUE for c in calls):
        notes.append("changing tx-manager queues halts the switch's transmission while the "
                     "change is offloaded: expect a brief loss on every port (MikroTik manual)")
    return calls


def _lane_value(facts: SwitchFacts, snap: SwitchSnapshot, lane: str, key: str) -> str | None:
    lf = facts.lanes.get(lane)
    value: object = None
    if lf is not None:
        value = {"speed": lf.speed, "auto-negotiation": lf.auto_negotiation,
                 "fec-mode": lf.fec_mode, "mtu": lf.mtu, "l2mtu": lf.l2mtu}[key]
    if value is None:
        row = snap.row("/interface/ethernet", name=lane) or {}
        value = row.get(key)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value in ("true", "false"):
        return "yes" if value == "true" else "no"
    return None if value is None else str(value)


def _port_calls(snap: SwitchSnapshot, bridge: str, lane: str) -> list[ApiCall]:
    row = snap.row("/interface/bridge/port", interface=lane)
    path = "/interface/bridge/port"
    if row is None:
        return [ApiCall(path, "add", None, (Attr("bridge", None, bridge),
                                            Attr("interface", None, lane),
                                            Attr("hw", None, "yes")))]
    attrs = [Attr(k, row.get(k), v) for k, v, cur in (
        ("bridge", bridge, row.get("bridge")), ("hw", "yes", _yes(row.get("hw"))),
        ("disabled", "no", _yes(row.get("disabled")))) if cur != v]
    return [ApiCall(path, "set", row.get("id") or row.get(".id"), tuple(attrs))] if attrs else []


def _yes(value: str | None) -> str | None:
    return {"true": "yes", "false": "no"}.get(value or "", value)


def _discovery_calls(snap: SwitchSnapshot) -> list[ApiCall]:
    disc = snap.row("/ip/neighbor/discovery-settings") or {}
    protocols = [p for p in (disc.get("protocol") or "").split(",") if p]
    if "lldp" in protocols:
        return []
    new = ",".join([*protocols, "lldp"])
    return [ApiCall("/ip/neighbor/discovery-settings", "set", None,
                    (Attr("protocol", disc.get("protocol"), new),))]


def _bounce_warnings(intent: Intent, lanes: list[str]) -> tuple[str, ...]:
    """One warning per port group with a lane whose link settings change: every lane of that
    port restarts, so name the changed lanes and every node cabled to the group."""
    sw = intent.switch
    assert sw is not None
    port_of = {lp.name: lp.port for lp in sw.lanes}
    groups: dict[str, list[str]] = {}
    for lane in lanes:
        groups.setdefault(port_of[lane], []).append(lane)
    out = []
    for port, changed in groups.items():
        nodes = [f"{lp.cabled_to} ({lp.name})" for lp in sw.lanes
                 if lp.port == port and lp.cabled_to]
        out.append(f"changing {', '.join(changed)} restarts every lane of {port} "
                   f"(mode {sw.port_modes[port]}); it bounces: {', '.join(nodes) or 'no node'}")
    return tuple(out)

