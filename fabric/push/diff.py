"""Intent minus facts: exactly what `push` would change, per host. Nothing else is applied."""

from __future__ import annotations

import difflib
from dataclasses import replace

import yaml

from fabric.errors import InputError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.push import render
from fabric.push.model import (
    ApiCall,
    Attr,
    FileChange,
    NetdevWant,
    PushPlan,
    SparkPlan,
    SwitchPlanDiff,
)
from fabric.push.netplan import ForeignDefinition
from fabric.push.probe import SparkSnapshot, SwitchSnapshot


class PushRefused(InputError):
    """A plan would touch something push must never touch (exit 2)."""


def plan_push(intent: Intent, facts: Facts, sparks: dict[str, SparkSnapshot],
              switch: SwitchSnapshot | None, hosts: list[str], adopt: bool = False) -> PushPlan:
    """The plan for `hosts`: hosts without facts or snapshot land in `errors`. `adopt`: take
    over other definitions of the twins (backed up, then removed) instead of refusing."""
    errors = dict(facts.errors)
    spark_plans: dict[str, SparkPlan] = {}
    switch_plan: SwitchPlanDiff | None = None
    for host in (h for h in hosts if h not in errors):
        if intent.switch is not None and host == intent.switch.host:
            if facts.switch is None or switch is None:
                errors[host] = "no switch facts"
            else:
                switch_plan = plan_switch(intent, facts.switch, switch)
            continue
        sf, snap = facts.sparks.get(host), sparks.get(host)
        if sf is None or snap is None:
            errors[host] = "no facts"
        else:
            spark_plans[host] = plan_spark(intent, sf, snap, adopt)
    return PushPlan(intent.name, spark_plans, switch_plan, errors)


def plan_spark(intent: Intent, facts: SparkFacts, snap: SparkSnapshot,
               adopt: bool = False) -> SparkPlan:
    """File diffs (netplan, sysctl.d, adopted foreign definitions) plus the runtime commands
    that make the twins match; `refused` says why the host must not be changed as it is."""
    host = facts.host
    wants = render.spark_wants(intent, host)
    files = tuple(file_change(host, path, snap.file(path), new)
                  for path, new in render.render_spark_files(intent, host).items())
    commands: list[str] = []
    touched: list[str] = []
    notes: list[str] = []
    refusals: list[str] = []
    if snap.has_netplan:
        renderer, source = snap.renderer(render.NETPLAN_PATH)
        notes.append(f"netplan renderer of this host: {renderer} (from "
                     f"{source or 'netplan default'}); the twins follow it and it is not changed")
    foreign = snap.foreign(render.NETPLAN_PATH, [w.netdev for w in wants])
    if foreign:
        adopted, blocked = adopt_foreign(host, snap, foreign, {w.netdev for w in wants}, adopt)
        files += adopted
        refusals += blocked
    arp_done: set[str] = set()
    for want in wants:
        cmds = _netdev_commands(facts, want, notes)
        if snap.has_mlnx_qos and "mlnx_qos" not in facts.missing:
            cmds += _qos_commands(facts, want.netdev)
        if want.netdev in facts.netdevs:
            for dev in (want.netdev, snap.stacked_on(want.netdev)):
                if dev is not None and dev not in arp_done:
                    arp_done.add(dev)
                    arp = _arp_command(snap, dev)
                    if arp and dev != want.netdev:
                        touched.append(dev)
                    cmds += arp
        if cmds:
            touched.append(want.netdev)
        commands += cmds
    if not snap.has_mlnx_qos:
        notes.append("mlnx_qos not found: RoCE QoS (DSCP trust, PFC) skipped")
    check_safe(host, touched, intent.hosts[host].mgmt_interface, snap.connected_netdev())
    plan = SparkPlan(host=host, files=files, commands=tuple(commands), wants=wants,
                     touched=tuple(touched), notes=tuple(notes), netplan=snap.has_netplan)
    if plan.changes and not snap.can_write:
        refusals.insert(0, sudo_refusal(host, snap))
    if snap.unreadable:
        notes.append(f"could not read {', '.join(snap.unreadable)} as {snap.user}: the diff "
                     "treats them as absent")
    return replace(plan, refused="; ".join(refusals) or None)


def sudo_refusal(host: str, snap: SparkSnapshot) -> str:
    """Why a login that cannot become root without a password is refused, and the fix."""
    why = ("sudo asks for a password" if snap.privilege == "password"
           else "sudo is not installed")
    return (f"user {snap.user} cannot change {host} ({why}; push runs `sudo -n`, never "
            f"typing a password). Allow it on {host} with `sudo visudo -f "
            f"/etc/sudoers.d/fabric` and the line: {snap.user} ALL=(ALL) NOPASSWD: ALL")


def adopt_foreign(host: str, snap: SparkSnapshot, foreign: list[ForeignDefinition],
                  twins: set[str], adopt: bool) -> tuple[tuple[FileChange, ...], list[str]]:
    """Other definitions of the twins: with `adopt`, the file changes that take them over
    (a file defining only twins is removed, one defining more loses the twins' stanzas);
    otherwise (or where push cannot take a file over) why the host is refused."""
    listed = "; ".join(str(f) for f in foreign)
    if not adopt:
        return (), [f"other definitions of the fabric twins would be merged with "
                    f"{render.NETPLAN_PATH} (their addresses add up and shift GID indexes): "
                    f"{listed}. Remove them, or run push with --adopt-foreign to take them "
                    "over (backed up, then removed)"]
    blocked = [str(f) for f in foreign if not f.adoptable]
    if blocked:
        return (), [f"cannot take over {'; '.join(blocked)}: only files under /etc are "
                    "adopted; remove them by hand"]
    out: list[FileChange] = []
    for f in foreign:
        old = snap.file(f.path)
        new = None if f.kind == "networkmanager" or old is None else without_twins(old, twins)
        out.append(file_change(host, f.path, old, new, snap.modes.get(f.path, "600")))
    return tuple(out), []


def without_twins(text: str, twins: set[str]) -> str | None:
    """A netplan file's text without the stanzas of `twins`; None if nothing else is left."""
    doc = yaml.safe_load(text) or {}
    network = doc.get("network") or {}
    left = False
    for kind, section in list(network.items()):
        if not isinstance(section, dict) or kind in ("version", "renderer"):
            continue
        for key in list(section):
            conf = section[key]
            match = conf.get("match", {}) if isinstance(conf, dict) else {}
            name = match.get("name") if isinstance(match, dict) else None
            if key in twins or name in twins:
                del section[key]
        if section:
            left = True
        else:
            del network[kind]
    if not left:
        return None
    head = f"# taken over by `fabric push`: the fabric twins live in {render.NETPLAN_PATH}\n"
    return head + yaml.safe_dump(doc, sort_keys=False)


def file_change(host: str, path: str, old: str | None, new: str | None,
                mode: str | None = None) -> FileChange:
    """`path` on `host` from `old` (None: absent) to `new` (None: removed), as a unified diff."""
    udiff = "" if old == new else "".join(difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=f"{path} (on {host})" if old is not None else "/dev/null",
        tofile=f"{path} (intent)" if new is not None else "/dev/null"))
    return FileChange(path, old, new, udiff, mode or render.SPARK_FILES[path])


def check_safe(host: str, touched: list[str], mgmt: str | None, connected: str | None) -> None:
    """Refuse any change to the management interface or the one this session rides on."""
    for netdev in touched:
        if netdev == (mgmt or "enP7s7"):
            raise PushRefused(f"{host}: refusing to change {netdev}: it is the management "
                              "interface")
        if connected is not None and netdev == connected:
            raise PushRefused(f"{host}: refusing to change {netdev}: this SSH session is "
                              "connected through it")


def _netdev_commands(facts: SparkFacts, want: NetdevWant, notes: list[str]) -> list[str]:
    nd = facts.netdevs.get(want.netdev)
    dev = want.netdev
    if nd is None:
        notes.append(f"{dev} does not exist on {facts.host}: cannot configure it (cable "
                     "plugged? driver loaded?)")
        return []
    cmds: list[str] = []
    if nd.mtu != want.mtu:
        cmds.append(f"ip link set dev {dev} mtu {want.mtu}")
    if not nd.admin_up:
        cmds.append(f"ip link set dev {dev} up")
    cmds += [f"ip addr del {a} dev {dev}" for a in nd.addresses if a not in want.addresses]
    cmds += [f"ip addr add {a} dev {dev}" for a in want.addresses if a not in nd.addresses]
    return cmds


def _arp_command(snap: SparkSnapshot, netdev: str) -> list[str]:
    """`sysctl` that gives `netdev` the ARP policy (the twin, or the device it is stacked on)."""
    have = snap.arp.get(netdev, {})
    wrong = [k for k, v in render.ARP_POLICY.items() if have.get(k) != v]
    if not wrong:
        return []
    return ["sysctl -qw " + " ".join(f"net.ipv4.conf.{netdev}.{k}={render.ARP_POLICY[k]}"
                                     for k in wrong)]


def _qos_commands(facts: SparkFacts, netdev: str) -> list[str]:
    q = facts.qos.get(netdev)
    pfc = (render.ROCE_PFC_PRIORITY,)
    if q is not None and q.trust == render.ROCE_TRUST and tuple(q.pfc_enabled) == pfc:
        return []
    bits = ",".join("1" if p in pfc else "0" for p in range(8))
    return [f"mlnx_qos -i {netdev} --trust {render.ROCE_TRUST} --pfc {bits}"]


def plan_switch(intent: Intent, facts: SwitchFacts, snap: SwitchSnapshot) -> SwitchPlanDiff:
    """API calls for the used lanes, the offloaded bridge and its ports, LLDP (and QoS)."""
    sw = intent.switch
    assert sw is not None
    calls: list[ApiCall] = []
    touched: list[str] = []
    bounced: list[str] = []
    for want in render.lane_wants(intent):
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
    for want in render.lane_wants(intent):
        if want.cabled_to:
            calls += _port_calls(snap, sw.bridge, want.name)
    calls += _discovery_calls(snap)
    notes = []
    if render.qos_supported(intent, facts.version):
        disc = snap.row("/ip/neighbor/discovery-settings") or {}
        if disc.get("lldp-dcbx") != "true":
            calls.append(ApiCall("/ip/neighbor/discovery-settings", "set", None,
                                 (Attr("lldp-dcbx", disc.get("lldp-dcbx"), "yes"),)))
        notes.append("QoS: lldp-dcbx managed; PFC/ECN profiles under "
                     "/interface/ethernet/switch/qos are left to the operator")
    else:
        notes.append(f"QoS/PFC skipped: RouterOS {facts.version} is below "
                     f"{_qos_min(intent)} (needs 7.15+, 7.17 recommended)")
    return SwitchPlanDiff(host=sw.host, version=facts.version, calls=tuple(calls),
                          touched_lanes=tuple(touched), bridge=sw.bridge,
                          warnings=_bounce_warnings(intent, bounced), notes=tuple(notes),
                          bounced=tuple(bounced), refused="; ".join(refusals) or None)


#: Ports of a CRS804 that can carry the management address (the RJ45 port).
_FABRIC_LANE = "qsfp"


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
                     if not r.get("interface", "").startswith(_FABRIC_LANE)), "ether1")
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


def _qos_min(intent: Intent) -> str:
    from fabric.intent.platforms import switch_model

    assert intent.switch is not None
    return switch_model(intent.switch.model).qos_min_version


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
