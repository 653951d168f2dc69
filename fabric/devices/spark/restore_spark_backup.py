"""Nornir task: put a Spark back exactly as its push backup recorded it."""

from __future__ import annotations

import re
import shlex
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.spark.apply_spark_config import NETPLAN_APPLY, NM_RELOAD
from fabric.devices.spark.backup_spark_config import backup_spark_config
from fabric.devices.spark.netplan import NM_CONNECTIONS
from fabric.devices.spark.platform import SPARK_FILES
from fabric.devices.spark.qos import ecn_path
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.errors import ParseError
from fabric.parsers import parse
from fabric.parsers.records import EthtoolPause
from fabric.remote.shell import RemoteCommandFailed, sh_steps, write_command


def restore_spark_backup(task: Task, backup: SparkSnapshot, netdevs: tuple[str, ...],
                         files: tuple[str, ...], rdma: tuple[str, ...] = ()) -> Result:
    """Restore `files` (content and mode; one that did not exist is removed), regenerate and
    apply netplan from them (so no config of the failed push stays live under /run), then, for
    `netdevs`, MTU, IPv4 addresses, ARP sysctls, admin state and QoS (mlnx_qos trust and PFC,
    RoCE ECN), and the RDMA CM ToS of `rdma`: ONE command, as root. Then read the host back
    and compare it with the backup.

    Every step runs even if one fails (a rollback puts back all it can); then the task raises
    RemoteCommandFailed naming the failed steps, or what differs from the backup.
    """
    labels, steps = restore_steps(backup, netdevs, files, rdma)
    ran = sh_steps(task, steps, timeout=60 + 5 * len(steps), root=True)
    failed = [f"`{label}` exited {rc}: {out[-300:]}"
              for label, (rc, out) in zip(labels, ran, strict=False) if rc != 0]
    if len(ran) != len(steps):
        failed.append(f"only {len(ran)} of {len(steps)} restore steps reported back")
    if not failed:
        qos = tuple(n for n in netdevs if n in backup.qos)
        after = backup_spark_config(task, files=tuple(p for p in files
                                                      if not p.startswith("/etc/netplan/")),
                                    qos_netdevs=qos)
        failed = restore_differences(backup, after.result, netdevs, files)
    if failed:
        raise RemoteCommandFailed(f"{task.host.name}: restore: {'; '.join(failed)}")
    return Result(host=task.host, result=labels, changed=True, diff="\n".join(labels))


def restore_differences(backup: SparkSnapshot, now: SparkSnapshot, netdevs: tuple[str, ...],
                        files: tuple[str, ...]) -> list[str]:
    """What still differs from the backup after a restore: files, and each netdev's QoS
    (trust, PFC), MTU, IPv4 addresses and admin state."""
    out = [f"{path} differs from its backup after the restore" for path in files
           if now.file(path) != backup.file(path)]
    for name in (n for n in netdevs if n in backup.qos and n in now.qos):
        qos_was, qos_is = _trust_pfc(backup.qos[name]), _trust_pfc(now.qos[name])
        if qos_was != qos_is:
            out.append(f"{name}: QoS (trust, PFC) {qos_is} after the restore, {qos_was} "
                       "before the push")
    for name in (n for n in netdevs if n in backup.pause):
        paused, pausing = _pause(backup.pause[name]), _pause(now.pause.get(name))
        if paused != pausing:
            out.append(f"{name}: pause (autoneg, rx, tx) {_show(pausing)} after the restore, "
                       f"{_show(paused)} before the push")
    for name in netdevs:
        was, is_ = backup.netdev(name), now.netdev(name)
        if was is None:
            continue
        if is_ is None:
            out.append(f"{name} is gone after the restore")
            continue
        for what, old, new in (("mtu", was.get("mtu"), is_.get("mtu")),
                               ("IPv4 addresses", _inet(was), _inet(is_)),
                               ("admin state", _up(was), _up(is_))):
            if old != new:
                out.append(f"{name}: {what} {new} after the restore, {old} before the push")
    return out


def _inet(link: dict[str, Any]) -> list[str]:
    return sorted(f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                  if a.get("family") == "inet")


def _up(link: dict[str, Any]) -> str:
    return "up" if "UP" in link.get("flags", []) else "down"


def restore_steps(backup: SparkSnapshot, netdevs: tuple[str, ...], files: tuple[str, ...],
                  rdma: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(what each step does, the shell step): files first, then netplan regenerated and
    applied from them (where the host has netplan and a netplan file was restored), then each
    netdev's state, then the RDMA CM ToS of `rdma`."""
    labels: list[str] = []
    steps: list[str] = []
    for path in files:
        old = backup.file(path)
        if old is None:
            labels.append(f"rm -f {path}")
            steps.append(f"rm -f {shlex.quote(path)}")
        else:
            mode = backup.modes.get(path) or SPARK_FILES.get(path, "600")
            labels.append(f"restore {path} (mode {mode})")
            steps.append(write_command(path, old, mode))
    if any(p.startswith(NM_CONNECTIONS + "/") for p in files):
        labels.append("nmcli connection reload")
        steps.append(NM_RELOAD)
    if backup.has_netplan and any(p.startswith("/etc/netplan/") for p in files):
        labels.append(NETPLAN_APPLY)
        steps.append(NETPLAN_APPLY)
    for name in netdevs:
        link = backup.netdev(name)
        if link is None:
            continue
        cmds = [*restore_commands(link), *arp_restore(name, backup.arp.get(name, {}))]
        if name in backup.qos:
            cmds += _qos_restore(name, backup.qos[name])
        if name in backup.pause:  # after mlnx_qos: its PFC write turns global pause off
            cmds += pause_restore(name, backup.pause[name])
        cmds += [f"echo {value} > {ecn_path(name, point)}"
                 for point, value in sorted(backup.ecn.get(name, {}).items())]
        labels += cmds
        steps += cmds
    for dev in (d for d in rdma if d in backup.roce_tos):
        cmd = f"cma_roce_tos -d {dev} -t {backup.roce_tos[dev]}"
        labels.append(cmd)
        steps.append(cmd)
    return labels, steps


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


def _pause(text: str | None) -> tuple[bool, bool, bool] | None:
    """(autoneg, rx, tx) of an `ethtool -a` text; None when absent or unreadable."""
    if not text:
        return None
    try:
        records = parse("ethtool_a", text)
    except ParseError:
        return None
    p = next((r for r in records if isinstance(r, EthtoolPause)), None)
    return None if p is None else (p.autoneg, p.rx, p.tx)


def _show(pause: tuple[bool, bool, bool] | None) -> str:
    if pause is None:
        return "unreadable"
    return "/".join("on" if v else "off" for v in pause)


def pause_restore(netdev: str, text: str) -> list[str]:
    """`ethtool -A` that puts one netdev's recorded pause parameters back (autoneg only where
    it was on: many drivers refuse to set it)."""
    pause = _pause(text)
    if pause is None:
        return []
    autoneg, rx, tx = pause
    words = (["autoneg on"] if autoneg else []) + [f"rx {'on' if rx else 'off'}",
                                                    f"tx {'on' if tx else 'off'}"]
    return [f"ethtool -A {netdev} {' '.join(words)}"]


def _trust_pfc(text: str) -> tuple[str | None, str | None]:
    trust = re.search(r"Priority trust state:\s*(\w+)", text)
    enabled = re.search(r"^\s*enabled\s+([\d\s]+)$", text, re.MULTILINE)
    return (trust.group(1) if trust else None,
            ",".join(enabled.group(1).split()) if enabled else None)


def _qos_restore(netdev: str, text: str) -> list[str]:
    trust = re.search(r"Priority trust state:\s*(\w+)", text)
    enabled = re.search(r"^\s*enabled\s+([\d\s]+)$", text, re.MULTILINE)
    args = []
    if trust:
        args.append(f"--trust {trust.group(1)}")
    if enabled:
        args.append("--pfc " + ",".join(enabled.group(1).split()))
    return [f"mlnx_qos -i {netdev} {' '.join(args)}"] if args else []
