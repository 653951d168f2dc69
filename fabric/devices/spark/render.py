"""A Spark's desired state rendered from the intent: netplan, sysctl.d, the lossless RoCE
script and its udev rules, and the runtime state of each fabric twin."""

from __future__ import annotations

from functools import cache

import jinja2

from fabric.devices.spark.model import NetdevWant
from fabric.devices.spark.platform import (
    ARP_POLICY,
    DEFAULT_MGMT,
    ECN_POINTS,
    LOGIND_PATH,
    NETPLAN_PATH,
    QOS_RULES_PATH,
    QOS_SCRIPT_PATH,
    SYSCTL_PATH,
)
from fabric.devices.spark.qos import ecn_path
from fabric.intent.model import Intent
from fabric.intent.platforms import roce_qos


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("fabric.devices.spark", "templates"),
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
    mgmt = intent.hosts[host].mgmt_interface or DEFAULT_MGMT
    wants = [w for w in spark_wants(intent, host) if w.netdev != mgmt]
    return _env().get_template("netplan.yaml.j2").render(
        path=NETPLAN_PATH, topology=intent.name, mgmt=mgmt, wants=wants)


def render_sysctl(intent: Intent, host: str) -> str:
    """The sysctl.d file of `host`: ARP_POLICY for each fabric twin, never the management one."""
    mgmt = intent.hosts[host].mgmt_interface or DEFAULT_MGMT
    wants = [w for w in spark_wants(intent, host) if w.netdev != mgmt]
    return _env().get_template("sysctl.conf.j2").render(
        path=SYSCTL_PATH, topology=intent.name, mgmt=mgmt, wants=wants, policy=ARP_POLICY)


def render_qos_script(intent: Intent, host: str) -> str:
    """The lossless RoCE script of `host` (its fabric twins and their RDMA devices)."""
    r = roce_qos()
    mgmt = intent.hosts[host].mgmt_interface or DEFAULT_MGMT
    twins = [i for i in intent.interfaces(host) if i.netdev != mgmt]
    return _env().get_template("roce-qos.sh.j2").render(
        path=QOS_SCRIPT_PATH, rules=QOS_RULES_PATH, topology=intent.name, twins=twins, r=r,
        ecn_sysfs=[ecn_path("$netdev", point, r) for point in ECN_POINTS])


def render_qos_rules(intent: Intent, host: str) -> str:
    """The udev rules that run the lossless RoCE script for each twin and RDMA device."""
    mgmt = intent.hosts[host].mgmt_interface or DEFAULT_MGMT
    twins = [i for i in intent.interfaces(host) if i.netdev != mgmt]
    return _env().get_template("roce-qos.rules.j2").render(
        path=QOS_RULES_PATH, script=QOS_SCRIPT_PATH, topology=intent.name,
        netdevs="|".join(i.netdev for i in twins), rdma="|".join(i.rdma for i in twins))


def render_logind(intent: Intent) -> str:
    """The logind drop-in: RemoveIPC=no (an engine's IPC outlives the login that made it)."""
    return _env().get_template("logind.conf.j2").render(path=LOGIND_PATH,
                                                        topology=intent.name)


def render_spark_files(intent: Intent, host: str) -> dict[str, str]:
    """Path -> desired content of every file push manages on `host` (SPARK_FILES order)."""
    files = {NETPLAN_PATH: render_netplan(intent, host), SYSCTL_PATH: render_sysctl(intent, host),
             LOGIND_PATH: render_logind(intent)}
    if intent.lossless:
        files |= {QOS_SCRIPT_PATH: render_qos_script(intent, host),
                  QOS_RULES_PATH: render_qos_rules(intent, host)}
    return files
