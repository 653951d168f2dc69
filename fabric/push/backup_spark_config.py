"""Nornir task: snapshot a Spark for push (netplan and other managed files, `ip -j
addr/link/route`, ARP sysctls, tools, QoS) in one batched command over the host's Netmiko
session."""

from __future__ import annotations

import base64
import json
import re
import shlex
from typing import Any

from nornir.core.task import Result, Task

from fabric.intent.platforms import roce_qos
from fabric.push.snapshot import PRIVILEGES, SparkSnapshot
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
    netplan: dict[str, str] = {}
    other: dict[str, str] = {}
    modes: dict[str, str] = {}
    tools: dict[str, bool] = {}
    ipj: dict[str, list[dict[str, Any]]] = {"addr": [], "link": [], "route": []}
    arp: dict[str, dict[str, str]] = {}
    qos: dict[str, str] = {}
    pause: dict[str, str] = {}
    ssh_ip: str | None = None
    who = ["root", "root"]
    readonly: dict[str, str] = {}
    nm: dict[str, str] = {}
    unreadable: list[str] = []
    ecn: dict[str, dict[str, str]] = {}
    tos: dict[str, str] = {}
    rdma_present: list[str] = []
    for line in out.splitlines():
        tag, _, rest = line.rstrip("\r").partition(" ")
        if tag == "@@WHO":
            who = [*rest.split(), "", ""][:2]
        elif tag == "@@UNREADABLE":
            unreadable.append(rest.strip())
        elif tag in ("@@ROFILE", "@@NMFILE"):
            path, mode, blob = [*rest.split(" ", 2), "", ""][:3]
            (readonly if tag == "@@ROFILE" else nm)[path] = base64.b64decode(blob).decode()
            modes[path] = mode
        elif tag == "@@SSH":
            parts = rest.split()
            ssh_ip = parts[2] if len(parts) >= 3 else None
        elif tag in ("@@FILE", "@@XFILE"):
            path, mode, blob = [*rest.split(" ", 2), "", ""][:3]
            (netplan if tag == "@@FILE" else other)[path] = base64.b64decode(blob).decode()
            modes[path] = mode
        elif tag == "@@TOOL":
            tool, _, yes = rest.partition(" ")
            tools[tool] = yes.strip() == "yes"
        elif tag == "@@IP":
            what, _, data = rest.partition(" ")
            ipj[what] = list(json.loads(data or "[]"))
        elif tag == "@@ARP":
            name, *values = rest.split()
            if len(values) == len(ARP_KEYS):
                arp[name] = dict(zip(ARP_KEYS, values, strict=True))
        elif tag in ("@@QOS", "@@PAUSE"):
            name, _, blob = rest.partition(" ")
            (qos if tag == "@@QOS" else pause)[name] = base64.b64decode(blob).decode()
        elif tag == "@@ECN":
            name, *points = rest.split()
            ecn[name] = {p: v for p, v in zip(("np", "rp"), points, strict=False) if v != "-"}
        elif tag == "@@RDMA":
            rdma_present.append(rest.strip())
        elif tag == "@@TOS":
            name, _, value = rest.partition(" ")
            if value.strip().isdigit():
                tos[name] = value.strip()
    snap = SparkSnapshot(host=task.host.name, netplan=netplan, ip_addr=ipj["addr"],
                         ip_link=ipj["link"], ip_route=ipj["route"],
                         has_netplan=tools.get("netplan", False),
                         has_mlnx_qos=tools.get("mlnx_qos", False), ssh_server_ip=ssh_ip,
                         qos=qos, pause=pause, arp=arp, files=other, modes=modes, user=who[0],
                         privilege=who[1] if who[1] in PRIVILEGES else "no-sudo",
                         netplan_ro=readonly, nm_keyfiles=nm, unreadable=unreadable, ecn=ecn,
                         roce_tos=tos, has_cma_roce_tos=tools.get("cma_roce_tos", False),
                         rdma_present=rdma_present)
    return Result(host=task.host, result=snap, changed=False)
