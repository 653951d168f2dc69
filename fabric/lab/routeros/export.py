"""``/export terse`` and the console's ``/system resource print`` text, from the state."""

from __future__ import annotations

import time

from fabric.intent.platforms import version_tuple

from .platform import CRS804, QOS_LOSSLESS_SINCE, QOS_SINCE
from .qos_state import DEFAULT_TX_QUEUES, QosPort, QosSettings
from .state import Bridge, BridgePort, Discovery, Ether, IpAddress, Lane, State

DEFAULT_DISCOVERY = Discovery()


def _quote(value: str) -> str:
    if value and all(ch.isalnum() or ch in "-_.,:/*" for ch in value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _yn(value: bool) -> str:
    return "yes" if value else "no"


def _pairs(pairs: list[tuple[str, str]]) -> str:
    return " ".join(f"{k}={_quote(v)}" for k, v in pairs)


def _lane_changes(lane: Lane) -> list[tuple[str, str]]:
    default = Lane(id="", name=lane.name, default_name=lane.default_name)
    out: list[tuple[str, str]] = []
    if lane.advertise != default.advertise:
        out.append(("advertise", ",".join(lane.advertise)))
    if lane.auto_negotiation != default.auto_negotiation:
        out.append(("auto-negotiation", _yn(lane.auto_negotiation)))
    if lane.comment:
        out.append(("comment", lane.comment))
    if lane.disabled:
        out.append(("disabled", "yes"))
    if lane.fec_mode != default.fec_mode:
        out.append(("fec-mode", lane.fec_mode))
    if lane.l2mtu != default.l2mtu:
        out.append(("l2mtu", str(lane.l2mtu)))
    if lane.mtu != default.mtu:
        out.append(("mtu", str(lane.mtu)))
    if lane.speed != default.speed:
        out.append(("speed", lane.speed))
    return out


def _ether_changes(ether: Ether) -> list[tuple[str, str]]:
    default = Ether(id="", name=ether.name, default_name=ether.default_name)
    out: list[tuple[str, str]] = []
    if ether.advertise != default.advertise:
        out.append(("advertise", ",".join(ether.advertise)))
    if ether.auto_negotiation != default.auto_negotiation:
        out.append(("auto-negotiation", _yn(ether.auto_negotiation)))
    if ether.comment:
        out.append(("comment", ether.comment))
    if ether.disabled:
        out.append(("disabled", "yes"))
    if ether.l2mtu != default.l2mtu:
        out.append(("l2mtu", str(ether.l2mtu)))
    if ether.mtu != default.mtu:
        out.append(("mtu", str(ether.mtu)))
    if ether.speed != default.speed:
        out.append(("speed", ether.speed))
    return out


def _address_args(a: IpAddress) -> list[tuple[str, str]]:
    out = [("address", a.address)]
    if a.comment:
        out.append(("comment", a.comment))
    if a.disabled:
        out.append(("disabled", "yes"))
    out += [("interface", a.interface), ("network", a.network)]
    return out


def _bridge_args(b: Bridge) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if b.comment:
        out.append(("comment", b.comment))
    if b.disabled:
        out.append(("disabled", "yes"))
    if b.mtu != "auto":
        out.append(("mtu", b.mtu))
    out.append(("name", b.name))
    if b.protocol_mode != "rstp":
        out.append(("protocol-mode", b.protocol_mode))
    if b.vlan_filtering:
        out.append(("vlan-filtering", "yes"))
    return out


def _port_args(p: BridgePort) -> list[tuple[str, str]]:
    out = [("bridge", p.bridge)]
    if p.comment:
        out.append(("comment", p.comment))
    if p.disabled:
        out.append(("disabled", "yes"))
    if not p.hw:
        out.append(("hw", "no"))
    out.append(("interface", p.interface))
    if p.pvid != 1:
        out.append(("pvid", str(p.pvid)))
    return out


def export_terse(state: State, now: float | None = None) -> str:
    """``/export terse`` of the configuration that differs from defaults, RouterOS 7 style."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    version = state.version.split()[0]
    lines = [
        f"# {stamp} by RouterOS {version}",
        "# software id = LAB0-CRS8",
        "#",
        f"# model = {CRS804.model}",
        "# serial number = LAB804000001",
    ]
    lines += [f"/interface bridge add {_pairs(_bridge_args(b))}" for b in state.bridges]
    for lane in state.lanes:
        changes = _lane_changes(lane)
        if changes:
            find = f"[ find default-name={lane.default_name} ]"
            lines.append(f"/interface ethernet set {find} {_pairs(changes)}")
    for ether in state.ethers:
        changes = _ether_changes(ether)
        if changes:
            find = f"[ find default-name={ether.default_name} ]"
            lines.append(f"/interface ethernet set {find} {_pairs(changes)}")
    lines += [f"/interface bridge port add {_pairs(_port_args(p))}" for p in state.bridge_ports]
    lines += qos_lines(state)
    lines += [f"/ip address add {_pairs(_address_args(a))}" for a in state.addresses]
    d = state.discovery
    disc: list[tuple[str, str]] = []
    if d.discover_interface_list != DEFAULT_DISCOVERY.discover_interface_list:
        disc.append(("discover-interface-list", d.discover_interface_list))
    if d.lldp_dcbx and version_tuple(state.version)[:2] >= QOS_SINCE:
        disc.append(("lldp-dcbx", "yes"))
    if d.protocol != DEFAULT_DISCOVERY.protocol:
        disc.append(("protocol", d.protocol))
    if disc:
        lines.append(f"/ip neighbor discovery-settings set {_pairs(disc)}")
    lines.append(f"/system identity set name={_quote(state.identity)}")
    return "\n".join(lines)


def _qos_port_changes(port: QosPort, full: bool) -> list[tuple[str, str]]:
    default = QosPort(id="", name=port.name)
    out: list[tuple[str, str]] = []
    for rate_queue, bps in sorted(port.egress_rate.items()):
        out.append((f"egress-rate-queue{rate_queue}", str(bps)))
    for key in ("map", "pfc", "profile", "trust_l2", "trust_l3", "tx_manager"):
        if getattr(port, key) != getattr(default, key) and (full or key not in
                                                               ("pfc", "tx_manager")):
            out.append((key.replace("_", "-"), getattr(port, key)))
    return out


def qos_lines(state: State) -> list[str]:
    """The switch chip and QoS configuration that differs from defaults (emulated state)."""
    version = version_tuple(state.version)[:2]
    full, lossless = version >= QOS_SINCE, version >= QOS_LOSSLESS_SINCE
    lines: list[str] = []
    sw = state.switch
    chip: list[tuple[str, str]] = []
    if sw.l3_hw_offloading:
        chip.append(("l3-hw-offloading", "yes"))
    if sw.qos_hw_offloading and full:
        chip.append(("qos-hw-offloading", "yes"))
    if chip:
        lines.append(f"/interface ethernet switch set {sw.name} {_pairs(chip)}")
    prefix = "/interface ethernet switch qos"
    for p in (p for p in state.qos.profiles if not p.builtin):
        args = [(k, str(v)) for k, v in (("dscp", p.dscp), ("pcp", p.pcp)) if v is not None]
        if lossless and not p.automap:
            args.append(("automap", "no"))
        args += [("name", p.name), ("traffic-class", str(p.traffic_class))]
        lines.append(f"{prefix} profile add {_pairs(args)}")
    for m in state.qos.maps_ip:
        args = [("dscp", m.dscp)] + ([("map", m.map)] if m.map else []) + [
            ("profile", m.profile)] + ([("disabled", "yes")] if m.disabled else [])
        lines.append(f"{prefix} map ip add {_pairs(args)}")
    for pfc in (p for p in state.qos.pfc if not p.builtin):
        lines.append(f"{prefix} priority-flow-control add {_pairs([('name', pfc.name), ('rx', _yn(pfc.rx)), ('traffic-class', pfc.traffic_class), ('tx', _yn(pfc.tx))])}")  # noqa: E501
    for q in state.qos.tx_queues:
        schedule, weight, shared = DEFAULT_TX_QUEUES[q.traffic_class]
        args = [(k, v) for k, v, d in (
            ("ecn", _yn(q.ecn), "no"), ("schedule", q.schedule, schedule),
            ("use-shared-buffers", _yn(q.use_shared_buffers), _yn(shared)),
            ("weight", str(q.weight), str(weight)), ("wred", _yn(q.wred), "no")) if v != d]
        if args:
            find = f"[ find tx-manager={q.tx_manager} traffic-class={q.traffic_class} ]"
            lines.append(f"{prefix} tx-manager queue set {find} {_pairs(args)}")
    for port in state.qos.ports:
        changes = _qos_port_changes(port, full)
        if changes:
            lines.append(f"{prefix} port set {port.name} {_pairs(changes)}")
    s, base = state.qos.settings, QosSettings()
    changed = [(k.replace("_", "-"), getattr(s, k)) for k in
               ("lossless_buffers", "lossless_traffic_class", "multicast_buffers",
                "shared_buffers", "wred_threshold")
               if getattr(s, k) != getattr(base, k) and (lossless or "lossless" not in k)]
    if changed and full:
        lines.append(f"{prefix} settings set {_pairs(changed)}")
    return lines


def resource_text(state: State) -> str:
    p = CRS804
    rows = [
        ("version", state.version),
        ("free-memory", f"{p.free_memory // 2**20}.0MiB"),
        ("total-memory", f"{p.total_memory // 2**20}.0MiB"),
        ("cpu", p.cpu),
        ("cpu-count", str(p.cpu_count)),
        ("architecture-name", p.architecture_name),
        ("board-name", p.board_name),
        ("platform", "MikroTik"),
    ]
    return "\n".join(f"{k:>20}: {v}" for k, v in rows)
