"""Nornir task: put a Spark back exactly as its push backup recorded it."""

from __future__ import annotations

import re
import shlex
from typing import Any

from nornir.core.task import Result, Task

from fabric.push.probe import SparkSnapshot
from fabric.tasks.push_shell import sh_ok, write_file


def restore_spark_backup(task: Task, backup: SparkSnapshot, netdevs: tuple[str, ...],
                         netplan_path: str) -> Result:
    """Restore the netplan file and, for `netdevs`, MTU, IPv4 addresses, ARP sysctls and admin
    state."""
    old = backup.netplan.get(netplan_path)
    if old is None:
        sh_ok(task, f"rm -f {shlex.quote(netplan_path)}")
    else:
        write_file(task, netplan_path, old)
    done: list[str] = []
    for name in netdevs:
        link = backup.netdev(name)
        if link is None:
            continue
        for cmd in [*restore_commands(link), *arp_restore(name, backup.arp.get(name, {}))]:
            sh_ok(task, cmd)
            done.append(cmd)
        if name in backup.qos:
            for cmd in _qos_restore(name, backup.qos[name]):
                sh_ok(task, cmd)
                done.append(cmd)
    return Result(host=task.host, result=done, changed=True, diff="\n".join(done))


def restore_commands(link: dict[str, Any]) -> list[str]:
    """`ip` commands that bring one netdev back to its `ip -j addr` record (IPv4 only)."""
    dev = link["ifname"]
    cmds = [f"ip link set dev {dev} mtu {link['mtu']}", f"ip -4 addr flush dev {dev}"]
    for a in link.get("addr_info", []):
        if a.get("family") != "inet":
            continue
        brd = f" broadcast {a['broadcast']}" if a.get("broadcast") else ""
        cmds.append(f"ip addr add {a['local']}/{a['prefixlen']}{brd} dev {dev}")
    up = "UP" in link.get("flags", [])
    cmds.append(f"ip link set dev {dev} {'up' if up else 'down'}")
    return cmds


def arp_restore(netdev: str, arp: dict[str, str]) -> list[str]:
    """`sysctl` that puts one netdev's recorded ARP sysctls back (none recorded: nothing)."""
    if not arp:
        return []
    return ["sysctl -qw " + " ".join(f"net.ipv4.conf.{netdev}.{k}={v}"
                                     for k, v in sorted(arp.items()))]


def _qos_restore(netdev: str, text: str) -> list[str]:
    trust = re.search(r"Priority trust state:\s*(\w+)", text)
    enabled = re.search(r"^\s*enabled\s+([\d\s]+)$", text, re.MULTILINE)
    args = []
    if trust:
        args.append(f"--trust {trust.group(1)}")
    if enabled:
        args.append("--pfc " + ",".join(enabled.group(1).split()))
    return [f"mlnx_qos -i {netdev} {' '.join(args)}"] if args else []
