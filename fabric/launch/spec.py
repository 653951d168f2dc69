"""What a launch needs from the fabric: rank order, entry node, rendezvous address and the
NCCL/Gloo environment, each variable with the reason it is set."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fabric.errors import InputError
from fabric.intent.model import Intent
from fabric.intent.platforms import roce_qos

if TYPE_CHECKING:
    from fabric.report.model import Report


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    why: str


_SUBNET_AWARE = ("NVIDIA's subnet-aware routing (its NCCL logs \"Subnet-aware routing\") "
                 "keeps each queue pair between GIDs of one subnet")

#: NCCL settings per topology kind that depend on nothing else (NVIDIA's dgx-spark-playbooks
#: multi-sparks cluster setup and sparkrun set them; `--env` overrides any of them).
KIND_ENV: dict[str, tuple[EnvVar, ...]] = {
    "ring": (
        EnvVar("NCCL_IB_SUBNET_AWARE_ROUTING", "1", f"{_SUBNET_AWARE}. Each cable is its own "
               "subnet, so a peer is reached through the twin that faces it; stock NCCL times "
               "out on queue pairs to GIDs it cannot reach"),
        EnvVar("NCCL_IB_MERGE_NICS", "0", "keep every RDMA device separate: rocep1s0f0 and "
               "rocep1s0f1 differ only by PCI function, so NCCL would merge them into one NIC, "
               "though on a ring they lead to different neighbours"),
        EnvVar("NCCL_NET_PLUGIN", "none", "NCCL's own IB transport: a net plugin that an image "
               "ships (libnccl-net.so) would take over the RDMA devices without the ring's "
               "subnet-aware routing"),
    ),
    "star": (
        EnvVar("NCCL_IB_SUBNET_AWARE_ROUTING", "1", f"{_SUBNET_AWARE}. Through the switch a "
               "twin-A GID reaches only twin-A GIDs (one subnet per rail); NVIDIA sets it on "
               "switched clusters too"),
    ),
}


@dataclass(frozen=True)
class Rank:
    rank: int
    host: str
    fabric_addr: str  # the rendezvous-side address of this node
    mgmt_host: str | None


@dataclass(frozen=True)
class LaunchSpec:
    """Ranks in topology order, the rendezvous, and the environment common to all ranks."""

    topology: str
    intent_hash: str
    kind: str
    entry: str
    ranks: tuple[Rank, ...]
    master_addr: str
    socket_ifname: str
    env: tuple[EnvVar, ...]

    @property
    def world_size(self) -> int:
        return len(self.ranks)


def rank_order(intent: Intent, entry: str) -> list[str]:
    """Ring: walk the ring from the entry so neighbours are adjacent ranks. Star: node ids,
    entry first."""
    sparks = [h.name for h in intent.sparks]
    if entry not in sparks:
        raise InputError(f"entry node {entry!r} is not a Spark of {intent.name}: "
                         f"{', '.join(sparks)}")
    if intent.kind == "ring":
        import networkx as nx

        g = nx.Graph(intent.graph)
        order = [entry]
        prev = None
        while len(order) < len(sparks):
            nxt = sorted(n for n in g.neighbors(order[-1]) if n != prev and n not in order)
            if not nxt:
                break
            prev = order[-1]
            order.append(nxt[0])
        return order
    rest = [s for s in sparks if s != entry]
    return [entry, *rest]


def _spark_port(intent: Intent, host: str) -> str:
    ports = sorted({i.port for i in intent.interfaces(host)})
    return ports[0]


def _tuning_env(intent: Intent, order: list[str], gid_index: int | None,
                rails: list[str]) -> list[EnvVar]:
    """The variables after the bootstrap ones: GID index, rails, lossless class, the
    topology kind's own."""
    env: list[EnvVar] = []
    if gid_index is not None:
        env.append(EnvVar("NCCL_IB_GID_INDEX", str(gid_index), "the RoCE v2 GID index that "
                          "`fabric validate` found identical on every node"))
    else:
        env.append(EnvVar("NCCL_IB_GID_INDEX", "", "not set: no validated RoCE GID (no RDMA in "
                          "this fabric, e.g. the lab); NCCL falls back to sockets"))
    if len(rails) > 1:
        env.append(EnvVar("NCCL_CROSS_NIC", "0", f"{len(rails)} rails ({', '.join(rails)}): a "
                          "twin-A to twin-B queue pair cannot cross rails, so each NCCL channel "
                          "keeps to one rail"))
    if intent.lossless:
        r = roce_qos()
        env.append(EnvVar("NCCL_IB_TC", str(r.traffic_class_byte), f"qos: lossless: RoCE "
                          f"traffic class byte = DSCP {r.dscp} << 2 | ECT(0), so NCCL's queue "
                          f"pairs land in the switch's and NICs' lossless class (PFC priority "
                          f"{r.priority}, ECN); RDMA CM connections get the same ToS from "
                          f"cma_roce_tos, set by `fabric push`"))
    env += KIND_ENV.get(intent.kind, ())
    if intent.kind == "ring" and len(order) >= 4:
        env.append(EnvVar("NCCL_ALGO", "Ring", "ring of 4+: stock NCCL also builds a tree "
                          "that connects non-adjacent ranks and fails"))
    return env


def build_spec(intent: Intent, entry: str = "spark01", gid_index: int | None = None,
               mgmt_addresses: dict[str, str] | None = None) -> LaunchSpec:
    """The launch spec for a validated intent; `gid_index` comes from the passing report."""
    order = rank_order(intent, entry)
    hosts = intent.hosts
    env: list[EnvVar] = []
    rails: list[str] = []
    if intent.kind == "ring":
        # No fabric subnet spans a ring: bootstrap over the management LAN (tiny traffic);
        # the collective data still goes over the fabric HCAs below.
        ifname = hosts[entry].mgmt_interface or "enP7s7"
        addrs = {h: (mgmt_addresses or {}).get(h) or hosts[h].hostname or h for h in order}
        hcas = sorted({i.rdma for i in intent.interfaces(entry)})
        env.append(EnvVar("NCCL_SOCKET_IFNAME", f"={ifname}", "bootstrap/control only: a ring "
                          "has no subnet shared by all nodes, so rendezvous uses the management "
                          "interface; model data stays on NCCL_IB_HCA"))
        env.append(EnvVar("GLOO_SOCKET_IFNAME", ifname, "same interface for torch/gloo "
                          "control traffic; a Spark has no eth0 and defaults pick Wi-Fi"))
        env.append(EnvVar("NCCL_IB_HCA", "=" + ",".join(hcas), "both twins of both ring "
                          "ports: one twin alone caps a cable at ~100 Gb/s"))
    else:
        port = _spark_port(intent, entry)
        twin_a = next(i for i in intent.interfaces(entry) if i.port == port and i.twin == 0)
        ifname = twin_a.netdev
        addrs = {h: str(next(i for i in intent.interfaces(h) if i.twin == 0).address.ip)
                 for h in order}
        hcas = [i.rdma for i in sorted(intent.interfaces(entry), key=lambda i: i.twin)
                if i.port == port]
        env.append(EnvVar("NCCL_SOCKET_IFNAME", f"={ifname}", f"bootstrap/control on rail 0 "
                          f"({twin_a.address.network}); never the management route"))
        env.append(EnvVar("GLOO_SOCKET_IFNAME", ifname, "torch/gloo control on the same rail; "
                          "a Spark has no eth0 and defaults pick Wi-Fi"))
        env.append(EnvVar("NCCL_IB_HCA", "=" + ",".join(hcas), f"both twins of {port}: one "
                          "twin alone caps the cable at ~100 Gb/s (98 vs 161 Gb/s measured)"))
        rails = sorted({str(i.address.network) for i in intent.interfaces(entry)
                        if i.port == port})
    env += _tuning_env(intent, order, gid_index, rails)
    ranks = tuple(Rank(r, h, addrs[h], hosts[h].hostname) for r, h in enumerate(order))
    return LaunchSpec(topology=intent.name, intent_hash=intent.intent_hash, kind=intent.kind,
                      entry=entry, ranks=ranks, master_addr=addrs[entry], socket_ifname=ifname,
                      env=tuple(env))


def with_extra_env(spec: LaunchSpec, extra: dict[str, str]) -> LaunchSpec:
    """The spec with `--env VAR=VALUE` added (or overriding a rendered variable), each
    explained as set on the command line."""
    if not extra:
        return spec
    env = list(spec.env)
    for name, value in extra.items():
        old = next((i for i, v in enumerate(env) if v.name == name), None)
        if old is None:
            env.append(EnvVar(name, value, "set on the command line (--env)"))
        else:
            env[old] = EnvVar(name, value, f"overridden on the command line (--env); the "
                              f"fabric's value was {env[old].value or '(unset)'}")
    return replace(spec, env=tuple(env))


#: name -> IPv4 address (raises OSError when it cannot)
Resolver = Callable[[str], str]


def _is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def resolve_ipv4(name: str) -> str:
    """`name` itself when it is an IPv4 address, else its first IPv4 address from the resolver
    of the machine rendering the launch."""
    if _is_ipv4(name):
        return name
    infos = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)
    if not infos:
        raise OSError(f"no IPv4 address for {name}")
    return str(infos[0][4][0])


def with_ip_addresses(spec: LaunchSpec, resolve: Resolver | None = None) -> LaunchSpec:
    """The spec with every rank's address and the rendezvous as IPv4 addresses, resolved now
    (Ray registers `--node-ip-address` and vLLM compares it with VLLM_HOST_IP: both must be
    the same IP, never a name). InputError naming the node when a name does not resolve."""
    lookup = resolve or resolve_ipv4
    cache: dict[str, str] = {}

    def ip(host: str, addr: str) -> str:
        if addr not in cache:
            try:
                cache[addr] = str(ipaddress.IPv4Address(addr if _is_ipv4(addr)
                                                        else lookup(addr)))
            except (OSError, ValueError) as exc:
                raise InputError(
                    f"{host}: its launch address {addr!r} does not resolve to an IPv4 address "
                    f"here ({exc}); vLLM over Ray needs IP addresses: give the node's IP as "
                    "`hostname:` in the inventory, or fix name resolution on this machine"
                ) from None
        return cache[addr]

    ranks = tuple(replace(r, fabric_addr=ip(r.host, r.fabric_addr)) for r in spec.ranks)
    master = next(r.fabric_addr for r in ranks if r.host == spec.entry)
    return replace(spec, ranks=ranks, master_addr=master)


def validated_gid_index(report: Report | None) -> int | None:
    """The GID index the passing report validated (check `gid.index`), if any."""
    for result in report.results if report else []:
        if result.check == "gid.index" and result.status == "pass" and result.actual is not None:
            return int(result.actual)
    return None


#: Variables whose value is a secret: never rendered, recorded or logged (passed by name).
SECRET_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def env_pairs(items: list[str]) -> dict[str, str]:
    """`--env VAR=VALUE` options as a dict; InputError on a malformed one, or on a secret
    (its value would land in the scripts, plan.json and the launch record)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if name in SECRET_ENV:
            raise InputError(f"--env {name}: a secret is never written into the scripts, "
                             "plan.json or the launch record; export it in every node's login "
                             "environment (e.g. ~/.profile) and the launch passes it by name")
        if not sep or not name.isidentifier():
            raise InputError(f"--env {item!r}: expected VAR=VALUE")
        out[name] = value
    return out
