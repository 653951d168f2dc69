"""Healthy facts derived from an intent; tests mutate one thing and expect one failure."""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

from fabric.facts import (
    BandwidthFact,
    BridgeFact,
    EthtoolFact,
    Facts,
    GidFact,
    HostFacts,
    ImageFact,
    LaneFact,
    NeighborFact,
    NetdevFact,
    PcieFact,
    PingFact,
    RouteFact,
    SparkFacts,
    SwitchFacts,
    TimeFact,
    VersionFacts,
)
from fabric.intent.build import load_intent
from fabric.intent.model import Intent

MGMT_NET = ipaddress.IPv4Network("192.168.10.0/24")
VERSIONS = VersionFacts(kernel="6.11.0-1016-nvidia", nic_driver="mlx5_core 24.10-1.1.4",
                        nic_firmware="28.45.4028 (NVD0000000087)", nccl="2.27.7",
                        cuda_driver="580.95.05")

#: The engine image every healthy Spark has (NCCL as the hosts').
VLLM_IMAGE = "nvcr.io/nvidia/vllm:26.05.post1-py3"
VLLM_IMAGE_ID = "sha256:" + "5" * 64


def intent(name: str) -> Intent:
    return load_intent(name)


def _mac(node: int, i: int) -> str:
    return f"4c:bb:47:00:{node:02x}:{i:02x}"


def spark_facts(it: Intent, host: str) -> SparkFacts:
    h = it.hosts[host]
    node = h.node_id or 0
    plans = {p.netdev: p for p in it.interfaces(host)}
    mgmt = h.mgmt_interface or "enP7s7"
    netdevs = {mgmt: NetdevFact(mgmt, 1500, True, True, _mac(node, 0),
                                addresses=(f"{MGMT_NET.network_address + 10 + node}/24",))}
    routes = [RouteFact("default", mgmt, str(MGMT_NET.network_address + 1)),
              RouteFact(str(MGMT_NET), mgmt)]
    ethtool: dict[str, EthtoolFact] = {}
    rdma: dict[str, str] = {}
    gids: list[GidFact] = []
    neighbors: list[NeighborFact] = []
    i = 1
    for twins in h.ports.values():
        for twin in twins:
            plan = plans.get(twin.netdev)
            i += 1
            if plan is None:
                netdevs[twin.netdev] = NetdevFact(twin.netdev, 1500, False, False, _mac(node, i))
                continue
            netdevs[twin.netdev] = NetdevFact(twin.netdev, it.mtu, True, True, _mac(node, i),
                                              addresses=(str(plan.address),))
            routes.append(RouteFact(str(plan.address.network), twin.netdev))
            ethtool[twin.netdev] = EthtoolFact(twin.netdev, it.profile.ethtool_speed_mbps, True,
                                               "mlx5_core", "24.10-1.1.4",
                                               "28.45.4028 (NVD0000000087)")
            if it.profile.rdma:
                rdma[twin.rdma] = twin.netdev
                gids.extend(_gids(twin.rdma, twin.netdev, str(plan.address.ip), node, i))
            link = it.link(plan.link_id)
            peer = link.peer_of(host)
            peer_host = it.hosts[peer.host]
            peer_port = (peer.port if peer_host.role == "switch"
                         else peer_host.ports[peer.port][plan.twin].netdev)
            neighbors.append(NeighborFact(twin.netdev, peer.host, peer_port))
    return SparkFacts(host=host, hostname=host, netdevs=netdevs, routes=tuple(routes),
                      ethtool=ethtool, rdma=rdma, gids=tuple(gids),
                      neighbors=tuple(neighbors), versions=VERSIONS,
                      time=TimeFact("chrony", True, 0.0002, 3), forward_policy="ACCEPT",
                      qos={}, host_state=_host_state(it, plans))


def _host_state(it: Intent, plans: dict[str, Any]) -> HostFacts:
    """A healthy host: each cabled twin's function at the profile's PCIe link, no foreign
    NetworkManager profile, RemoveIPC=no, 110 GiB of 120 available."""
    speed, width = it.profile.pcie_speed_gts, it.profile.pcie_width
    pcie = {} if speed is None or width is None else {
        n: PcieFact(n, speed, width, speed, width, f"000{i}:01:00.0")
        for i, n in enumerate(plans)}
    return HostFacts(pcie=pcie, bios_version="5.36_0ACUM018", bios_date="03/12/2026",
                     nm_profiles=(), remove_ipc=False,
                     remove_ipc_file="/etc/systemd/logind.conf.d/40-fabric.conf",
                     mem_total_kib=120 * 2**20, mem_available_kib=110 * 2**20,
                     images=(ImageFact(VLLM_IMAGE_ID, (VLLM_IMAGE,), "2.27.7"),))


def _gids(rdma: str, netdev: str, ip: str, node: int, i: int) -> list[GidFact]:
    ll = f"fe80:0000:0000:0000:4ebb:47ff:fe00:{node:02x}{i:02x}"
    a, b, c, d = (int(x) for x in ip.split("."))
    v4 = f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"
    return [GidFact(rdma, 1, 0, ll, "RoCE v1", None, netdev),
            GidFact(rdma, 1, 1, ll, "RoCE v2", None, netdev),
            GidFact(rdma, 1, 2, v4, "RoCE v1", ip, netdev),
            GidFact(rdma, 1, 3, v4, "RoCE v2", ip, netdev)]


def switch_facts(it: Intent) -> SwitchFacts | None:
    sw = it.switch
    if sw is None:
        return None
    lanes: dict[str, LaneFact] = {}
    neighbors = []
    in_bridge = []
    for lane in sw.lanes:
        cabled = lane.link_id is not None
        lanes[lane.name] = LaneFact(
            name=lane.name, disabled=False, running=cabled, mtu=sw.mtu, l2mtu=sw.l2mtu,
            max_l2mtu=sw.max_l2mtu, speed=lane.speed, auto_negotiation=lane.auto_negotiation,
            fec_mode=lane.fec_mode, status="link-ok" if cabled else "no-link",
            rate=f"{lane.gbps}Gbps" if cabled else None,
            bridge=sw.bridge if cabled else None, hw_offload=True if cabled else None)
        if cabled and lane.cabled_to:
            in_bridge.append(lane.name)
            link = it.link(lane.link_id or "")
            spark = link.peer_of(sw.host)
            netdev = it.hosts[spark.host].ports[spark.port][0].netdev
            neighbors.append(NeighborFact(lane.name, spark.host, netdev))
    return SwitchFacts(host=sw.host, identity=sw.host, version="7.17.2", board="CRS804-4DDQ",
                       lanes=lanes, bridges=(BridgeFact(sw.bridge, sw.mtu, tuple(in_bridge)),),
                       neighbors=tuple(neighbors), lldp_enabled=True)


def pings(it: Intent) -> tuple[PingFact, ...]:
    """DF pings, small and jumbo, both ways between every pair of twins sharing a subnet."""
    out: list[PingFact] = []
    plans = it.interfaces()
    for a in plans:
        for b in plans:
            if a.host == b.host or a.address.network != b.address.network:
                continue
            for size in (56, it.mtu - 28):
                out.append(PingFact(a.host, a.netdev, b.host, b.netdev, str(b.address.ip),
                                    size, 3, 3, link_id=a.link_id))
    return tuple(out)


def bandwidth(it: Intent, gbps: float = 96.0) -> tuple[BandwidthFact, ...]:
    out: list[BandwidthFact] = []
    sparks = [h.name for h in it.sparks]
    for link in it.links:
        a, b = link.a.host, link.b.host
        if it.switch is not None:  # star: each Spark sends to the next one through the switch
            a = link.peer_of(it.switch.host).host
            b = sparks[(sparks.index(a) + 1) % len(sparks)]
        out.append(BandwidthFact(link.id, "iperf3", None, a, b, gbps + 2))
        if it.profile.rdma:
            for twin in (0, 1):
                out.append(BandwidthFact(link.id, "ib_write_bw", twin, a, b, gbps))
            out.append(BandwidthFact(link.id, "ib_write_bw", None, a, b, gbps * 2 - 3))
    return tuple(out)


def healthy(it: Intent) -> Facts:
    """Facts of a fabric that is exactly as intended, probes included."""
    return Facts(collected="2026-11-30T00:00:00+00:00", topology=it.name,
                 sparks={h.name: spark_facts(it, h.name) for h in it.sparks},
                 switch=switch_facts(it), pings=pings(it), bandwidth=bandwidth(it))


def replace_spark(facts: Facts, host: str, **changes: Any) -> Facts:
    sparks = dict(facts.sparks)
    sparks[host] = dataclasses.replace(sparks[host], **changes)
    return dataclasses.replace(facts, sparks=sparks)


def replace_netdev(facts: Facts, host: str, netdev: str, **changes: Any) -> Facts:
    nds = dict(facts.sparks[host].netdevs)
    nds[netdev] = dataclasses.replace(nds[netdev], **changes)
    return replace_spark(facts, host, netdevs=nds)


def replace_lane(facts: Facts, lane: str, **changes: Any) -> Facts:
    assert facts.switch is not None
    lanes = dict(facts.switch.lanes)
    lanes[lane] = dataclasses.replace(lanes[lane], **changes)
    return dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, lanes=lanes))
