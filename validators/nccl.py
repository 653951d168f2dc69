"""nccl: nccl-tests bus bandwidth meets the profile (skipped, saying why, without runs)."""

from __future__ import annotations

from fabric.facts import MPIRUN, TESTS, Facts
from fabric.intent.model import Intent
from validators.judge import Findings
from validators.registry import NCCL, check, needs

#: What nccl judges: nccl-tests run across the Sparks (their RoCE GIDs set NCCL_IB_GID_INDEX).
NEEDS = needs("nccl", spark=True, probes=(NCCL,))


@check("nccl.busbw")
def check_busbw(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each nccl-tests run's average bus bandwidth against nccl_busbw_min_gbytes."""
    absent = _absent(facts)
    for tool, hosts in absent.items():
        out.skip(f"nccl-tests not run: {tool} is not installed on {', '.join(hosts)}")
    if not facts.nccl:
        if not absent:
            out.skip("no nccl-tests results in the facts (no probe ran nccl-tests): bus "
                     "bandwidth not judged")
        return
    floor = intent.profile.nccl_busbw_min_gbytes
    for run in facts.nccl:
        who = ",".join(run.hosts)
        if run.error or run.busbw_gbytes is None:
            out.fail(f"{run.test} on {who} did not complete: {run.error or 'no bus bandwidth'}",
                     expected=floor, actual=None,
                     hint="NCCL_DEBUG=INFO: look for NET/Socket (TCP fallback), the HCA list "
                     "and the GID index")
        elif floor is None:
            out.ok(f"{run.test} on {who}: {run.busbw_gbytes:.1f} GB/s (profile "
                   f"{intent.profile.name} sets no floor)", actual=run.busbw_gbytes)
        elif run.busbw_gbytes < floor:
            out.fail(f"{run.test} on {who}: bus bandwidth {run.busbw_gbytes:.1f} GB/s < "
                     f"{floor} GB/s", expected=floor, actual=run.busbw_gbytes,
                     hint="check NCCL_IB_HCA lists both twins, NCCL_IB_GID_INDEX (gid.index), "
                     "MTU 9000 (mtu.*) and a release NCCL build")
        else:
            out.ok(f"{run.test} on {who}: {run.busbw_gbytes:.1f} GB/s", expected=floor,
                   actual=run.busbw_gbytes)


def _absent(facts: Facts) -> dict[str, list[str]]:
    """Hosts per nccl-tests tool the probe found missing (`SparkFacts.missing`)."""
    out: dict[str, list[str]] = {}
    for tool in (MPIRUN, *TESTS):
        hosts = sorted(h for h, sf in facts.sparks.items() if tool in sf.missing)
        if hosts:
            out[tool] = hosts
    return out
