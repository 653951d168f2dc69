"""Desired state rendered from the intent: Spark netplan + runtime, the CRS804's settings."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import jinja2

from fabric.intent.model import Intent, LanePlan
from fabric.intent.platforms import roce_qos, switch_model
from fabric.push.model import NetdevWant
from fabric.push.qos import ECN_POINTS, ecn_path, qos_refusal, qos_script

NETPLAN_PATH = "/etc/netplan/40-fabric.yaml"
#: The fabric twins' ARP policy, persisted (applied at boot by systemd-sysctl / udev).
SYSCTL_PATH = "/etc/sysctl.d/40-fabric.conf"
#: Lossless RoCE on the twins (topology `qos: lossless`), persisted: the script sets DSCP
#: trust, PFC, ECN and the RDMA CM ToS; udev runs it for each twin and RDMA device as it appears
#: (at boot, where udev replays every device, and on cable hotplug).
QOS_SCRIPT_PATH = "/etc/fabric/roce-qos.sh"
QOS_RULES_PATH = "/etc/udev/rules.d/70-fabric-roce-qos.rules"
QOS_FILES = {QOS_SCRIPT_PATH: "755", QOS_RULES_PATH: "644"}
#: Every file push manages on a Spark, in the order it shows and writes them, with its mode
#: (the QoS files only where the topology is lossless).
SPARK_FILES = {NETPLAN_PATH: "600", SYSCTL_PATH: "644", **QOS_FILES}
#: The managed files outside /etc/netplan (the snapshot reads every netplan file anyway).
OTHER_FILES = tuple(p for p in SPARK_FILES if not p.startswith("/etc/netplan/"))
#: ARP on every netdev that carries a twin's frames: both twins of a port hear every broadcast
#: on their cable, and by default each answers ARP for every local address ("ARP flux"), so a
#: peer can cache the wrong twin's MAC and its replies miss the twin that asked. Answer only for
#: addresses on the receiving netdev (1) and announce that netdev's own address (2).
ARP_POLICY = {"arp_ignore": "1", "arp_announce": "2"}


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("fabric.push", "templates"),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    env.filters["sysctl_key"] = sysctl_key
    return env


def sysctl_key(netdev: str, key: str) -> str:
    """`net.ipv4.conf.<netdev>.<key>`; in the slash form when the name has a dot (a VLAN)."""
    if "." in netdev:
        return f"net/ipv4/conf/{netdev}/{key}"
    return f"net.ipv4.conf.{netdev}.{key}"


def spark_wants(intent: Intent, host: str) -> tuple[NetdevWant, ...]:
    """Every fabric twin of `host`: MTU, its one address, and a peer address to ping."""
    out: list[NetdevWant] = []
    for iface in intent.interfaces(host):
        peer = iface.peer.address
        out.append(NetdevWant(netdev=iface.netdev, mtu=iface.mtu, addresses=(str(iface.address),),
                              link_id=iface.link_id,
                              peer_address=str(peer.ip) if peer is not None
                              else _rail_neighbour(intent, host, iface.twin)))
    return tuple(out)


def _rail_neighbour(intent: Intent, host: str, twin: int) -> str | None:
    """On a switched rail: the next Spark's address on the same rail (cyclic by node id)."""
    ring = [i for s in intent.sparks for i in intent.interfaces(s.name) if i.twin == twin]
    names = [i.host for i in ring]
    if host not in names or len(ring) < 2:
        return None
    nxt = ring[(names.index(host) + 1) % len(ring)]
    return str(nxt.address.ip)


def render_netplan(intent: Intent, host: str) -> str:
    """The netplan file of `host` (fabric twins only, never the management interface)."""
    mgmt = intent.hosts[host].mgmt_interface or "enP7s7"
    wants = [w for w in spark_wants(intent, host) if w.netdev != mgmt]
    return _env().get_template("netplan.yaml.j2").render(
        path=NETPLAN_PATH, topology=intent.name, mgmt=mgmt, wants=wants)


def render_sysctl(intent: Intent, host: str) -> str:
    """The sysctl.d file of `host`: ARP_POLICY for each fabric twin, never the management one."""
    mgmt = intent.hosts[host].mgmt_interface or "enP7s7"
    wants = [w for w in spark_wants(intent, host) if w.netdev != mgmt]
    return _env().get_template("sysctl.conf.j2").render(
        path=SYSCTL_PATH, topology=intent.name, mgmt=mgmt, wants=wants, policy=ARP_POLICY)


def render_qos_script(intent: Intent, host: str) -> str:
    """The lossless RoCE script of `host` (its fabric twins and their RDMA devices)."""
    r = roce_qos()
    mgmt = intent.hosts[host].mgmt_interface or "enP7s7"
    twins = [i for i in intent.interfaces(host) if i.netdev != mgmt]
    return _env().get_template("roce-qos.sh.j2").render(
        path=QOS_SCRIPT_PATH, rules=QOS_RULES_PATH, topology=intent.name, twins=twins, r=r,
        ecn_sysfs=[ecn_path("$netdev", point, r) for point in ECN_POINTS])


def render_qos_rules(intent: Intent, host: str) -> str:
    """The udev rules that run the lossless RoCE script for each twin and RDMA device."""
    mgmt = intent.hosts[host].mgmt_interface or "enP7s7"
    twins = [i for i in intent.interfaces(host) if i.netdev != mgmt]
    return _env().get_template("roce-qos.rules.j2").render(
        path=QOS_RULES_PATH, script=QOS_SCRIPT_PATH, topology=intent.name,
        netdevs="|".join(i.netdev for i in twins), rdma="|".join(i.rdma for i in twins))


def render_spark_files(intent: Intent, host: str) -> dict[str, str]:
    """Path -> desired content of every file push manages on `host` (SPARK_FILES order)."""
    files = {NETPLAN_PATH: render_netplan(intent, host), SYSCTL_PATH: render_sysctl(intent, host)}
    if intent.lossless:
        files |= {QOS_SCRIPT_PATH: render_qos_script(intent, host),
                  QOS_RULES_PATH: render_qos_rules(intent, host)}
    return files


@dataclass(frozen=True)
class LaneWant:
    """The settings a used switch lane should have (RouterOS attribute -> value)."""

    name: str
    attrs: dict[str, str]
    cabled_to: str | None


def lane_wants(intent: Intent) -> list[LaneWant]:
    """Each lane the topology uses: forced speed, auto-negotiation, FEC, mtu, l2mtu."""
    sw = intent.switch
    if sw is None:
        return []
    return [LaneWant(lane.name, _lane_attrs(lane, sw.mtu, sw.l2mtu), lane.cabled_to)
            for lane in sw.lanes]


def _lane_attrs(lane: LanePlan, mtu: int, l2mtu: int) -> dict[str, str]:
    return {"speed": lane.speed, "auto-negotiation": "yes" if lane.auto_negotiation else "no",
            "fec-mode": lane.fec_mode, "l2mtu": str(l2mtu), "mtu": str(mtu)}


def version_tuple(version: str) -> tuple[int, ...]:
    """'7.19.4 (stable)' -> (7, 19, 4); unknown parts are 0."""
    head = version.split()[0] if version.split() else "0"
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in head.split("."))


def render_routeros(intent: Intent, version: str) -> str:
    """The switch's desired state as a RouterOS script (for review and golden tests)."""
    sw = intent.switch
    if sw is None:
        return ""
    refusal = qos_refusal(intent, version) if intent.lossless else None
    lossless = intent.lossless and refusal is None
    return _env().get_template("routeros.rsc.j2").render(
        host=sw.host, model=sw.model, topology=intent.name, lanes=sw.lanes, mtu=sw.mtu,
        l2mtu=sw.l2mtu, bridge=sw.bridge, qos=intent.qos, version=version, refusal=refusal,
        qos_lines=qos_script(intent, version) if lossless else [],
        lossless_tc=lossless and version_tuple(version) >= version_tuple(
            switch_model(sw.model).qos_lossless_tc_version))
