"""qos: where lossless RoCE is configured (trust, PFC), every twin is configured alike."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent
from validators.judge import Out, reference
from validators.registry import check


@check("qos.consistent")
def check_consistent(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges trust state and PFC priorities equal on every cabled twin (skip if none set)."""
    seen = []
    for plan in intent.interfaces():
        sf = facts.sparks.get(plan.host)
        q = sf.qos.get(plan.netdev) if sf else None
        if q is not None:
            seen.append((plan, (q.trust, tuple(sorted(q.pfc_enabled)))))
    if not any(trust or pfc for _, (trust, pfc) in seen):
        out.skip("lossless RoCE (trust/PFC) is not configured on any twin")
        return
    ref = reference((p.host, v) for p, v in seen)
    want = {"trust": ref[0], "pfc": list(ref[1])}
    have = {(p.host, p.netdev) for p, _ in seen}
    for plan in intent.interfaces():
        if (plan.host, plan.netdev) not in have and plan.host in facts.sparks:
            out.fail(f"{plan.host} {plan.netdev}: no QoS settings while other twins use "
                     f"trust {ref[0]} PFC {list(ref[1])}", host=plan.host, link=plan.link_id,
                     expected=want, actual=None,
                     hint=f"mlnx_qos -i {plan.netdev} --trust {ref[0]} --pfc "
                     + ",".join("1" if i in ref[1] else "0" for i in range(8)))
    for plan, value in seen:
        actual = {"trust": value[0], "pfc": list(value[1])}
        if value == ref:
            out.ok(f"{plan.host} {plan.netdev}: trust {value[0]} PFC {list(value[1])}",
                   host=plan.host, link=plan.link_id, expected=want, actual=actual)
        else:
            out.fail(f"{plan.host} {plan.netdev}: trust {value[0]} PFC {list(value[1])}, "
                     f"other twins use trust {ref[0]} PFC {list(ref[1])}", host=plan.host,
                     link=plan.link_id, expected=want, actual=actual,
                     hint=f"mlnx_qos -i {plan.netdev} --trust {ref[0]} --pfc "
                     + ",".join("1" if i in ref[1] else "0" for i in range(8)))
