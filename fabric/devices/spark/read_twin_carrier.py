"""Nornir task: which Spark twins are not ready yet (carrier, and where asked the planned MTU
and addresses). A cheap read, polled while links train after a push."""

from __future__ import annotations

import re
from collections.abc import Mapping

from nornir.core.task import Result, Task

from fabric.devices.spark.commands import NETDEV_NAME
from fabric.devices.spark.model import NetdevWant
from fabric.remote.shell import sh_ok

_STATE = re.compile(r"^@@twin (\S+) (\S+) (\S+)$")
_INET = re.compile(r"^\d+:\s+(\S+?)(?:@\S+)?\s+inet\s+(\S+)")


def read_twin_carrier(task: Task, netdevs: tuple[str, ...],
                      wants: Mapping[str, NetdevWant] | None = None) -> Result:
    """The `netdevs` not ready, each `name` or `name (why)`: without carrier (down, absent or
    not trained yet) or, for those in `wants`, without their planned MTU and addresses yet
    (NetworkManager configures a device a while after `netplan apply`, once it has carrier).
    One command."""
    names = [n for n in netdevs if NETDEV_NAME.match(n)]
    if not names:
        return Result(host=task.host, result=[], changed=False)
    script = "; ".join(
        f"echo \"@@twin {n} $(cat /sys/class/net/{n}/carrier 2>/dev/null || echo 0) "
        f"$(cat /sys/class/net/{n}/mtu 2>/dev/null || echo 0)\"; "
        f"ip -o -4 addr show dev {n} 2>/dev/null || true" for n in names)
    return Result(host=task.host, result=not_ready(names, sh_ok(task, script), wants or {}),
                  changed=False)


def not_ready(names: list[str], output: str, wants: Mapping[str, NetdevWant]) -> list[str]:
    """`read_twin_carrier`'s verdict from its command's output."""
    carrier: dict[str, bool] = {}
    mtu: dict[str, str] = {}
    inet: dict[str, set[str]] = {n: set() for n in names}
    for line in output.splitlines():
        if m := _STATE.match(line.strip()):
            carrier[m.group(1)], mtu[m.group(1)] = m.group(2) == "1", m.group(3)
        elif (m := _INET.match(line.strip())) and m.group(1) in inet:
            inet[m.group(1)].add(m.group(2))
    out: list[str] = []
    for n in names:
        want = wants.get(n)
        if not carrier.get(n, False):
            out.append(n)
        elif want is not None and mtu.get(n) != str(want.mtu):
            out.append(f"{n} (mtu {mtu.get(n)}, want {want.mtu})")
        elif want is not None and (missing := sorted(set(want.addresses) - inet[n])):
            out.append(f"{n} (no {', '.join(missing)} yet)")
    return out
