"""Intent minus facts: exactly what `push` would change, per host. Nothing else is applied."""

from __future__ import annotations

import difflib
from dataclasses import replace

import yaml

from fabric.collect.read_switch_qos import QUEUE
from fabric.errors import InputError, ParseError
from fabric.facts import Facts, SparkFacts, SwitchFacts
from fabric.intent.model import Intent
from fabric.intent.platforms import RoceQos, roce_qos, switch_model
from fabric.parsers import parse
from fabric.parsers.records import MlnxQos
from fabric.push import qos, render
from fabric.push.model import (
    ApiCall,
    Attr,
    ChangeSet,
    FileChange,
    NetdevWant,
    SparkChanges,
    SwitchChanges,
)
from fabric.push.netplan import ForeignDefinition
from fabric.push.snapshot import SparkSnapshot, SwitchSnapshot


class PushRefused(InputError):
    """A changeset would touch something push must never touch (exit 2)."""


def diff_push(intent: Intent, facts: Facts, sparks: dict[str, SparkSnapshot],
              switch: SwitchSnapshot | None, hosts: list[str], adopt: bool = False) -> ChangeSet:
    """The changeset for `hosts`: hosts without facts or snapshot land in `errors`. `adopt`: take
    over other definitions of the twins (backed up, then removed) instead of refusing.

    Lossless (topology `qos: lossless`) is planned per cable, both ends or neither: a lane
    gets the switch's port QoS only where its Spark is in this push and takes its half."""
    errors = dict(facts.errors)
    spark_sets: dict[str, SparkChanges] = {}
    switch_set: SwitchChanges | None = None
    switch_host = intent.switch.host if intent.switch is not None else None
    for host in (h for h in hosts if h not in errors and h != switch_host):
        sf, snap = facts.sparks.get(host), sparks.get(host)
        if sf is None or snap is None:
            errors[host] = "no facts"
        else:
            spark_sets[host] = diff_spark(intent, sf, snap, adopt,
                                           switch_in_push=switch_host in hosts)
    if switch_host in hosts and switch_host not in errors:
        if facts.switch is None or switch is None:
            errors[switch_host] = "no switch facts"
        else:
            ready = {h for h, p in spark_sets.items() if not p.refused}
            switch_set = diff_switch(intent, facts.switch, switch, qos_sparks=ready)
    return ChangeSet(intent.name, spark_sets, switch_set, errors)


def diff_spark(intent: Intent, facts: SparkFacts, snap: SparkSnapshot,
               adopt: bool = False, switch_in_push: bool = True) -> SparkChanges:
    """File diffs (netplan, sysctl.d, adopted foreign definitions, the lossless RoCE script and
    udev rules) plus the runtime commands that make the twins match (lossless: mlnx_qos, RoCE
    ECN, RDMA CM ToS too); `refused` says why the host must not be changed as it is."""
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
    qos_cmds: dict[str, list[str]] = {}
    if intent.lossless:
        qos_cmds, qos_notes, qos_refusal_ = spark_qos(intent, facts, snap)
        notes += qos_notes
        refusals += [qos_refusal_] if qos_refusal_ else []
        if not switch_in_push and intent.switch is not None:
            notes.append(f"qos: lossless: {intent.switch.host} is not in this push; the lanes "
                         f"of {host} must carry the lossless class too (push the switch)")
    else:
        left = [p for p in render.QOS_FILES if snap.file(p) is not None]
        if left:
            notes.append(f"qos: lossy, but {', '.join(left)} from a lossless push are still "
                         "here: push leaves them; `fabric push rollback RUN_ID` of that push "
                         "removes them")
    arp_done: set[str] = set()
    for want in wants:
        cmds = _netdev_commands(facts, want, notes)
        cmds += qos_cmds.get(want.netdev, [])
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
    check_safe(host, touched, intent.hosts[host].mgmt_interface, snap.connected_netdev())
    changeset = SparkChanges(host=host, files=files, commands=tuple(commands), wants=wants,
                     touched=tuple(touched), notes=tuple(notes), netplan=snap.has_netplan)
    if changeset.changes and not snap.can_write:
        refusals.insert(0, sudo_refusal(host, snap))
    if snap.unreadable:
        notes.append(f"could not read {', '.join(snap.unreadable)} as {snap.user}: the diff "
                     "treats them as absent")
    return replace(changeset, refused="; ".join(refusals) or None)


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
    matched = [str(f) for f in foreign if f.by_match]
    if matched:
        return (), [f"cannot take over {'; '.join(matched)}: it catches the twins by a name "
                    "pattern or MAC address (and may catch other devices); edit it by hand so "
                    "that it no longer matches them"]
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


def spark_qos(intent: Intent, facts: SparkFacts, snap: SparkSnapshot
              ) -> tuple[dict[str, list[str]], list[str], str | None]:
    """The Spark's half of lossless RoCE: per twin the runtime commands that differ from the
    host (mlnx_qos DSCP trust + PFC, RoCE ECN in sysfs, the RDMA CM ToS of its device), notes on
    what the host does not have, and why the host cannot take it (no mlnx_qos)."""
    host, r = facts.host, roce_qos()
    if not snap.has_mlnx_qos:
        return {}, [], (f"qos: lossless needs mlnx_qos (NVIDIA's mlnx-tools) on {host} to trust "
                        "DSCP and run PFC on the twins, and it is not installed: its lane stays "
                        "lossy too (both ends or neither). Install it, or set `qos: lossy`")
    out: dict[str, list[str]] = {}
    no_ecn: list[str] = []
    no_rdma: list[str] = []
    no_tool: list[str] = []
    for changeset in intent.interfaces(host):
        dev = changeset.netdev
        if dev not in facts.netdevs:
            continue
        cmds = _mlnx_qos_commands(snap, dev, r)
        ecn = snap.ecn.get(dev, {})
        if not ecn:
            no_ecn.append(dev)
        cmds += [f"echo 1 > {qos.ecn_path(dev, point, r)}" for point in qos.ECN_POINTS
                 if point in ecn and ecn[point] != "1"]
        if changeset.rdma not in snap.rdma_present:
            no_rdma.append(changeset.rdma)
        elif not snap.has_cma_roce_tos:
            no_tool.append(changeset.rdma)
        elif snap.roce_tos.get(changeset.rdma) != str(r.traffic_class_byte):
            cmds.append(qos.tos_command(changeset.rdma))
        out[dev] = cmds
    notes = []
    if no_ecn:
        notes.append(f"RoCE ECN in sysfs ({qos.ecn_path('<twin>', 'np|rp', r)}) is absent on "
                     f"{', '.join(no_ecn)} (not an mlx5 netdev): not set; the persisted "
                     f"{render.QOS_SCRIPT_PATH} sets it where the driver has it")
    if no_rdma:
        notes.append(f"no RDMA device {', '.join(no_rdma)} here now: its RDMA CM ToS "
                     f"(cma_roce_tos) is set by {render.QOS_SCRIPT_PATH} when it appears")
    if no_tool:
        notes.append(f"cma_roce_tos not found: the RDMA CM ToS of {', '.join(no_tool)} is not "
                     f"set (NCCL uses NCCL_IB_TC={r.traffic_class_byte}, not RDMA CM)")
    return out, notes, None


def _mlnx_qos_commands(snap: SparkSnapshot, netdev: str, r: RoceQos) -> list[str]:
    """`mlnx_qos -i` where the twin's trust, PFC or DSCP map is not the recipe's."""
    text = snap.qos.get(netdev)
    try:
        found = [x for x in parse("mlnx_qos", text) if isinstance(x, MlnxQos)] if text else []
    except ParseError:
        found = []
    if not found:
        return [qos.mlnx_qos_command(netdev)]
    q = found[0]
    dscp_map = {d: p for p, ds in q.dscp2prio for d in ds}
    cmds = []
    if q.trust != "dscp" or tuple(q.pfc_enabled) != (r.priority,):
        cmds.append(qos.mlnx_qos_command(netdev))
    if q.trust == "dscp" and dscp_map and dscp_map.get(r.dscp) != r.priority:
        cmds.append(qos.dscp_map_command(netdev))  # shown only once DSCP is trusted
    return cmds


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
    notes: list[str] = []
    if intent.lossless:
        calls += _switch_qos(intent, facts, snap, qos_sparks, notes, refusals)
    else:
        notes.append("qos: lossy: the switch's QoS and LLDP DCBX are left as they are")
    return SwitchChanges(host=sw.host, version=facts.version, calls=tuple(calls),
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
    tc = qos.at_least(facts.version, switch_model(sw.model).qos_lossless_tc_version)
    notes.append(f"qos: lossless on RouterOS {facts.version}: "
                 + ("QoS profiles with automap and the lossless traffic class (7.23+)" if tc
                    else "QoS profile, DSCP map, port and PFC menus (7.15-7.22)"))
    if left:
        notes.append(f"qos: lossless: port QoS left as it is on {', '.join(left)}: its Spark "
                     "is not part of this push or cannot take its half (both ends or neither)")
    absent: list[str] = []
    calls = qos.switch_qos_calls(intent, facts.version, snap.rows, lanes, absent)
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
