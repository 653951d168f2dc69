"""Nornir task: snapshot a Spark for push (netplan and other managed files, `ip -j
addr/link/route`, ARP sysctls, tools, QoS) in one batched command over the host's SSH
session."""

from __future__ import annotations

import base64
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.spark.platform import PRIVILEGES
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.intent.platforms import roce_qos
from fabric.remote.shell import sh_ok

#: Sysctls of every netdev that push reads (and may set) under /proc/sys/net/ipv4/conf/<dev>/.
ARP_KEYS = ("arp_ignore", "arp_announce")

#: Who the login is, and how it becomes root (`@@WHO user privilege`); `R CMD` runs CMD as
#: root where it can (root, or `sudo -n`), else as the user (the reads that need root then
#: report `@@UNREADABLE`).
_WHO = (
    'u=$(id -u); n=$(id -un); '
    'if [ "$u" = 0 ]; then p=root; elif ! command -v sudo >/dev/null 2>&1; then p=no-sudo; '
    'elif sudo -n true >/dev/null 2>&1; then p=sudo; else p=password; fi; '
    'echo "@@WHO $n $p"; '
    'R() { if [ "$p" = sudo ]; then sudo -n sh -c "$1"; else sh -c "$1"; fi; }; '
)
#: `@@TAG path mode base64` for each file of a glob, `@@UNREADABLE path` where it cannot read.
_EACH = ('for f in {glob}; do [ -f "$f" ] || continue; '
         'if b=$(base64 -w0 "$f" 2>/dev/null); then '
         'echo "@@{tag} $f $(stat -c %a "$f") $b"; else echo "@@UNREADABLE $f"; fi; done; ')
#: Root-only reads: every netplan file netplan reads (/etc is 0600 on DGX OS).
_NETPLAN = (_EACH.format(glob="/etc/netplan/*.yaml", tag="FILE")
            + _EACH.format(glob="/lib/netplan/*.yaml /run/netplan/*.yaml", tag="ROFILE"))
_SCRIPT = (
    'echo "@@SSH ${SSH_CONNECTION:-}"; '
    "echo \"@@TOOL netplan $(command -v netplan >/dev/null && echo yes || echo no)\"; "
    "echo \"@@TOOL mlnx_qos $(command -v mlnx_qos >/dev/null && echo yes || echo no)\"; "
    "echo \"@@TOOL cma_roce_tos $(command -v cma_roce_tos >/dev/null && echo yes || echo no)\"; "
    "echo \"@@IP addr $(ip -j -d addr show)\"; "
    "echo \"@@IP link $(ip -j -d link show)\"; "
    "echo \"@@IP route $(ip -j route show table all)\"; "
    "for d in /proc/sys/net/ipv4/conf/*/; do n=$(basename \"$d\"); "
    "echo \"@@ARP $n $(cat \"$d/arp_ignore\" \"$d/arp_announce\" 2>/dev/null | tr '\\n' ' ')\"; "
    "done"
)


def _nm_script(netdevs: tuple[str, ...]) -> str:
    """NetworkManager keyfiles that name one of `netdevs` (root-only files), as `@@NMFILE`."""
    if not netdevs:
        return ""
    names = "|".join(re.escape(n) for n in netdevs)
    return ('for f in /etc/NetworkManager/system-connections/*; do [ -f "$f" ] || continue; '
            f"if grep -qE '^interface-name=({names})$' \"$f\" 2>/dev/null; then "
            'echo "@@NMFILE $f $(stat -c %a "$f") $(base64 -w0 "$f")"; '
            'elif [ ! -r "$f" ]; then echo "@@UNREADABLE $f"; fi; done; ')


def _qos_script(netdevs: tuple[str, ...]) -> str:
    """`mlnx_qos -i` of each netdev, base64 per line (only where mlnx_qos exists; as root)."""
    return "".join(f"; if command -v mlnx_qos >/dev/null && o=$(mlnx_qos -i {shlex.quote(n)} "
                   f"2>/dev/null); then echo \"@@QOS {n} $(printf %s \"$o\" | base64 -w0)\"; fi"
                   for n in netdevs)


def _pause_script(netdevs: tuple[str, ...]) -> str:
    """`ethtool -a` of each netdev, base64 (`@@PAUSE`): mlx5 turns link-level pause off at
    any PFC write, so a rollback of lossless QoS must put it back."""
    return "".join(f"; if o=$(ethtool -a {shlex.quote(n)} 2>/dev/null); then "
                   f"echo \"@@PAUSE {n} $(printf %s \"$o\" | base64 -w0)\"; fi"
                   for n in netdevs)


def _ecn_script(netdevs: tuple[str, ...]) -> str:
    """RoCE ECN of the lossless priority per twin, `@@ECN netdev np rp` (`-`: no such file)."""
    prio = roce_qos().priority
    return "".join(
        f"; e=/sys/class/net/{shlex.quote(n)}/ecn; echo \"@@ECN {n} "
        f"$(cat $e/roce_np/enable/{prio} 2>/dev/null || echo -) "
        f"$(cat $e/roce_rp/enable/{prio} 2>/dev/null || echo -)\"" for n in netdevs)


def _tos_script(rdma: tuple[str, ...]) -> str:
    """Each RDMA device that exists (`@@RDMA`) and its RDMA CM ToS (`@@TOS`, as root)."""
    return "".join(
        f"; if [ -e /sys/class/infiniband/{shlex.quote(d)} ]; then echo \"@@RDMA {d}\"; "
        f"if command -v cma_roce_tos >/dev/null; then echo \"@@TOS {d} "
        f"$(cma_roce_tos -d {shlex.quote(d)} 2>/dev/null | tail -n1)\"; fi; fi" for d in rdma)


def _files_script(paths: tuple[str, ...]) -> str:
    """Each of `paths` that exists: its mode and content (base64), as `@@XFILE` lines."""
    return "".join(f"; f={shlex.quote(p)}; [ -f \"$f\" ] && echo \"@@XFILE $f "
                   f"$(stat -c %a \"$f\") $(base64 -w0 \"$f\")\"" for p in paths)


def backup_spark_config(task: Task, qos_netdevs: tuple[str, ...] = (),
                        files: tuple[str, ...] = (), rdma: tuple[str, ...] = ()) -> Result:
    """Read (never change) what a push may touch on a Spark: who the login is and whether it
    can become root, every netplan file, NetworkManager profiles naming a twin, `files` (paths
    outside /etc/netplan), `ip -j`, ARP sysctls, QoS (mlnx_qos, `ethtool -a` pause and RoCE
    ECN of the twins, the RDMA CM ToS of the `rdma` devices). Result is a SparkSnapshot (a
    file it lacks did not exist, unless listed in `unreadable`)."""
    root_reads = (_NETPLAN + _nm_script(qos_netdevs) + "true" + _files_script(files)
                  + _qos_script(qos_netdevs) + _pause_script(qos_netdevs)
                  + _ecn_script(qos_netdevs) + _tos_script(rdma)
                  + "; true")
    script = _WHO + f"R {shlex.quote(root_reads)}; " + _SCRIPT + "; true"
    out = sh_ok(task, script, timeout=60)
    return Result(host=task.host, result=parse_snapshot(task.host.name, out), changed=False)


@dataclass
class _Read:
    """What the snapshot script printed, tag by tag (`@@TAG rest` lines)."""

    netplan: dict[str, str] = field(default_factory=dict)
    other: dict[str, str] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)
    tools: dict[str, bool] = field(default_factory=dict)
    ipj: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"addr": [], "link": [], "route": []})
    arp: dict[str, dict[str, str]] = field(default_factory=dict)
    qos: dict[str, str] = field(default_factory=dict)
    pause: dict[str, str] = field(default_factory=dict)
    ssh_ip: str | None = None
    who: list[str] = field(default_factory=lambda: ["root", "root"])
    readonly: dict[str, str] = field(default_factory=dict)
    nm: dict[str, str] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    ecn: dict[str, dict[str, str]] = field(default_factory=dict)
    tos: dict[str, str] = field(default_factory=dict)
    rdma_present: list[str] = field(default_factory=list)

    def take(self, tag: str, rest: str) -> None:
        if tag == "@@WHO":
            self.who = [*rest.split(), "", ""][:2]
        elif tag == "@@UNREADABLE":
            self.unreadable.append(rest.strip())
        elif tag in ("@@ROFILE", "@@NMFILE", "@@FILE", "@@XFILE"):
            path, mode, blob = [*rest.split(" ", 2), "", ""][:3]
            into = {"@@ROFILE": self.readonly, "@@NMFILE": self.nm, "@@FILE": self.netplan,
                    "@@XFILE": self.other}[tag]
            into[path] = base64.b64decode(blob).decode()
            self.modes[path] = mode
        elif tag == "@@SSH":
            parts = rest.split()
            self.ssh_ip = parts[2] if len(parts) >= 3 else None
        elif tag == "@@TOOL":
            tool, _, yes = rest.partition(" ")
            self.tools[tool] = yes.strip() == "yes"
        elif tag == "@@IP":
            what, _, data = rest.partition(" ")
            self.ipj[what] = list(json.loads(data or "[]"))
        else:
            self._take_qos(tag, rest)

    def _take_qos(self, tag: str, rest: str) -> None:
        if tag == "@@ARP":
            name, *values = rest.split()
            if len(values) == len(ARP_KEYS):
                self.arp[name] = dict(zip(ARP_KEYS, values, strict=True))
        elif tag in ("@@QOS", "@@PAUSE"):
            name, _, blob = rest.partition(" ")
            (self.qos if tag == "@@QOS" else self.pause)[name] = base64.b64decode(blob).decode()
        elif tag == "@@ECN":
            name, *points = rest.split()
            self.ecn[name] = {p: v for p, v in zip(("np", "rp"), points, strict=False)
                              if v != "-"}
        elif tag == "@@RDMA":
            self.rdma_present.append(rest.strip())
        elif tag == "@@TOS":
            name, _, value = rest.partition(" ")
            if value.strip().isdigit():
                self.tos[name] = value.strip()


def parse_snapshot(host: str, out: str) -> SparkSnapshot:
    """The SparkSnapshot of `host` from the snapshot script's output."""
    r = _Read()
    for line in out.splitlines():
        tag, _, rest = line.rstrip("\r").partition(" ")
        r.take(tag, rest)
    return SparkSnapshot(host=host, netplan=r.netplan, ip_addr=r.ipj["addr"],
                         ip_link=r.ipj["link"], ip_route=r.ipj["route"],
                         has_netplan=r.tools.get("netplan", False),
                         has_mlnx_qos=r.tools.get("mlnx_qos", False), ssh_server_ip=r.ssh_ip,
                         qos=r.qos, pause=r.pause, arp=r.arp, files=r.other, modes=r.modes,
                         user=r.who[0],
                         privilege=r.who[1] if r.who[1] in PRIVILEGES else "no-sudo",
                         netplan_ro=r.readonly, nm_keyfiles=r.nm, unreadable=r.unreadable,
                         ecn=r.ecn, roce_tos=r.tos,
                         has_cma_roce_tos=r.tools.get("cma_roce_tos", False),
                         rdma_present=r.rdma_present)
