"""forward: where Sparks forward fabric traffic (a ring of 4+), FORWARD must not drop it."""

from __future__ import annotations

import itertools

from fabric.facts import Facts
from fabric.intent.model import Intent
from validators.judge import Findings, spark_hosts
from validators.registry import check, needs


def _needs_forwarding(intent: Intent) -> bool:
    """True when some pair of Sparks has no cable between them and no switch joins them."""
    if intent.switch is not None:
        return False
    sparks = spark_hosts(intent)
    graph = intent.graph
    return any(not graph.has_edge(a, b) for a, b in itertools.combinations(sparks, 2))


#: What forward judges: each Spark's FORWARD policy.
NEEDS = needs("forward", spark=True)


@check("forward.policy")
def check_policy(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges the iptables FORWARD policy of each Spark that must forward (non-adjacent ring
    traffic): DROP (Docker's default) silently breaks it."""
    if not _needs_forwarding(intent):
        why = "the switch joins every pair" if intent.switch else "every pair is cabled"
        out.skip(f"{intent.name}: no Spark forwards fabric traffic ({why})")
        return
    for host, sf in out.sparks(intent):
        policy = sf.forward_policy
        if policy is None:
            out.ok(f"{host}: no iptables, nothing drops forwarded traffic", host=host,
                   expected="ACCEPT", actual=None)
        elif policy.upper() == "ACCEPT":
            out.ok(f"{host}: FORWARD policy ACCEPT", host=host, expected="ACCEPT",
                   actual=policy)
        else:
            out.fail(f"{host}: iptables FORWARD policy {policy}: ring traffic between "
                     f"non-adjacent Sparks through {host} is dropped", host=host,
                     expected="ACCEPT", actual=policy,
                     hint="iptables -P FORWARD ACCEPT (Docker sets DROP when installed; make "
                     "it stick, e.g. a DOCKER-USER rule or a systemd unit after docker)")
