"""The launch environment a topology implies, and what changes between two topologies."""

from __future__ import annotations

from fabric.intent.model import Intent
from fabric.plan.model import EnvChange


def launch_env(intent: Intent) -> dict[str, str]:
    """NCCL/Gloo variables for this fabric: both twins of each used port; Ring on a ring."""
    env: dict[str, str] = {}
    sparks = intent.sparks
    if not sparks:
        return env
    first = sparks[0]
    mgmt = first.mgmt_interface or "enP7s7"
    ifaces = sorted(intent.interfaces(first.name), key=lambda i: (i.port, i.twin))
    env["NCCL_SOCKET_IFNAME"] = mgmt
    env["GLOO_SOCKET_IFNAME"] = mgmt
    env["NCCL_IB_HCA"] = ",".join(i.rdma for i in ifaces)
    if intent.kind == "ring":
        env["NCCL_ALGO"] = "Ring"
    env["NNODES"] = str(len(sparks))
    return env


def env_changes(src: Intent, dst: Intent) -> list[EnvChange]:
    """Variables that differ (None = unset), in name order."""
    a, b = launch_env(src), launch_env(dst)
    return [EnvChange(k, a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys())
            if a.get(k) != b.get(k)]
