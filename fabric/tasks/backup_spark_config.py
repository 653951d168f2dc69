"""Nornir task: snapshot a Spark for push (netplan files, `ip -j addr/link/route`, tools)."""

from __future__ import annotations

import base64
import json
from typing import Any

from nornir.core.task import Result, Task

from fabric.push.probe import SparkSnapshot
from fabric.tasks.push_shell import sh, sh_ok

_SCRIPT = (
    'echo "@@SSH ${SSH_CONNECTION:-}"; '
    "for f in /etc/netplan/*.yaml; do [ -f \"$f\" ] && echo \"@@FILE $f $(base64 -w0 \"$f\")\"; "
    "done; "
    "echo \"@@TOOL netplan $(command -v netplan >/dev/null && echo yes || echo no)\"; "
    "echo \"@@TOOL mlnx_qos $(command -v mlnx_qos >/dev/null && echo yes || echo no)\""
)


def backup_spark_config(task: Task, qos_netdevs: tuple[str, ...] = ()) -> Result:
    """Read (never change) what a push may touch on a Spark; result is a SparkSnapshot."""
    head = sh_ok(task, _SCRIPT)
    netplan: dict[str, str] = {}
    tools: dict[str, bool] = {}
    ssh_ip: str | None = None
    for line in head.splitlines():
        if line.startswith("@@SSH "):
            parts = line.split()
            ssh_ip = parts[3] if len(parts) >= 4 else None
        elif line.startswith("@@FILE "):
            _, path, *blob = line.split(" ", 2)
            netplan[path] = base64.b64decode(blob[0] if blob else "").decode()
        elif line.startswith("@@TOOL "):
            _, tool, yes = line.split()
            tools[tool] = yes == "yes"
    qos: dict[str, str] = {}
    if tools.get("mlnx_qos"):
        for netdev in qos_netdevs:
            rc, out = sh(task, f"mlnx_qos -i {netdev}")
            if rc == 0:
                qos[netdev] = out
    snap = SparkSnapshot(host=task.host.name, netplan=netplan, ip_addr=_ipj(task, "addr"),
                         ip_link=_ipj(task, "link"), ip_route=_ipj(task, "route"),
                         has_netplan=tools.get("netplan", False),
                         has_mlnx_qos=tools.get("mlnx_qos", False), ssh_server_ip=ssh_ip,
                         qos=qos)
    return Result(host=task.host, result=snap, changed=False)


def _ipj(task: Task, what: str) -> list[dict[str, Any]]:
    data = json.loads(sh_ok(task, f"ip -j -d {what} show" if what != "route"
                            else "ip -j route show table all") or "[]")
    return list(data)
