"""gid: each addressed twin has a RoCE v2 GID for its IPv4 address, at one index everywhere."""

from __future__ import annotations

from fabric.facts import Facts, GidFact
from fabric.intent.model import Intent, InterfaceIntent
from validators.judge import Findings, reference, where
from validators.registry import check, needs


def _rdma_intents(intent: Intent, out: Findings) -> list[tuple[InterfaceIntent, list[GidFact]]]:
    """The planned twins whose host reports RDMA devices, with their GIDs; skips the rest."""
    if not intent.profile.rdma:
        out.skip(f"profile {intent.profile.name} has no RDMA: GIDs not judged")
        return []
    found: list[tuple[InterfaceIntent, list[GidFact]]] = []
    for intended, sf in out.twins(intent):
        if not sf.rdma:
            out.skip(f"{intended.host} reports no RDMA devices (they appear only with a cable "
                     f"plugged in; is rdma-core installed?): {intended.netdev} not judged",
                     host=intended.host, link=intended.link_id)
            continue
        found.append((intended, [g for g in sf.gids if g.rdma == intended.rdma]))
    return found


def _match(intent: Intent, intended: InterfaceIntent, gids: list[GidFact]) -> GidFact | None:
    want = intent.profile.gid_type
    return next((g for g in sorted(gids, key=lambda g: g.index)
                 if g.ipv4 == str(intended.address.ip) and g.gid_type == want), None)


#: What gid judges: each Spark's RDMA devices and RoCE GIDs.
NEEDS = needs("gid", spark=True)


@check("gid.present")
def check_present(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that each addressed twin's RDMA device has a RoCE v2 GID for its IPv4 address."""
    want = intent.profile.gid_type
    for intended, gids in _rdma_intents(intent, out):
        gid = _match(intent, intended, gids)
        expected = f"{want} GID for {intended.address.ip} on {intended.rdma}"
        if gid is not None:
            out.ok(f"{where(intended)}: {intended.rdma} has a {want} GID for "
                   f"{intended.address.ip} at index {gid.index}", host=intended.host,
                   link=intended.link_id, expected=expected, actual=gid.index)
            continue
        have = sorted({f"{g.index}:{g.gid_type}:{g.ipv4}" for g in gids if g.ipv4})
        out.fail(f"{where(intended)} on {intended.link_id}: {intended.rdma} has no {want} GID for "
                 f"{intended.address.ip}", host=intended.host, link=intended.link_id,
                 expected=expected, actual=have,
                 hint=f"check that {intended.netdev} has {intended.address} and is up, that "
                 f"{intended.rdma} maps to {intended.netdev} (ibdev2netdev), and that RoCE v2 is "
                 "enabled (cma_roce_mode)")


@check("gid.index")
def check_index(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges that the RoCE v2 GID index is the same on every twin (NCCL takes one index)."""
    found = [(intended, gid) for intended, gids in _rdma_intents(intent, out)
             if (gid := _match(intent, intended, gids)) is not None]
    if not found:
        if not out.results:
            out.skip("no RoCE v2 GID found on any twin (see gid.present)")
        return
    ref = reference((p.host, g.index) for p, g in found)
    odd = [(p, g) for p, g in found if g.index != ref]
    for intended, gid in odd:
        out.fail(f"{where(intended)}: {intent.profile.gid_type} GID at index {gid.index}, every "
                 f"other twin uses {ref}; NCCL_IB_GID_INDEX is one value for all nodes",
                 host=intended.host, link=intended.link_id, expected=ref, actual=gid.index,
                 hint=f"find what shifts {intended.rdma}'s GID table on {intended.host} "
                 f"(`show_gids`: an extra address on {intended.netdev}?) and remove it, or run "
                 "NCCL with a per-node NCCL_IB_GID_INDEX")
    if not odd:
        out.ok(f"{intent.profile.gid_type} GID at index {ref} on all {len(found)} twins "
               f"(NCCL_IB_GID_INDEX={ref})", expected="one index", actual=ref)
