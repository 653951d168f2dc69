"""The launch environment a topology implies (as `fabric launch` renders it), and what changes
between two topologies."""

from __future__ import annotations

from fabric.intent.model import Intent
from fabric.launch.spec import build_spec
from fabric.plan.model import EnvChange


def launch_env(intent: Intent) -> dict[str, str]:
    """The NCCL/Gloo variables `fabric launch` sets for this fabric (rank 0 = first Spark),
    plus the node count the launch flags carry (`--nnodes`)."""
    sparks = intent.sparks
    if not sparks:
        return {}
    spec = build_spec(intent, entry=sparks[0].name)
    env = {v.name: v.value for v in spec.env if v.value}
    env["--nnodes"] = str(spec.world_size)
    return env


def env_changes(src: Intent, dst: Intent) -> list[EnvChange]:
    """Variables that differ (None = unset), in name order."""
    a, b = launch_env(src), launch_env(dst)
    return [EnvChange(k, a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys())
            if a.get(k) != b.get(k)]
