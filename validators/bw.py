"""bw: measured bandwidth per link against the profile's floors and against its peer links."""

from __future__ import annotations

import statistics
from collections import defaultdict

from fabric.facts import BandwidthFact, Facts
from fabric.intent.model import Intent
from fabric.intent.profiles import LinkProfile
from validators.judge import Out
from validators.registry import check

Key = tuple[str, int | None]  # (tool, twin)


def _label(key: Key) -> str:
    tool, twin = key
    if tool == "iperf3":
        return "TCP (iperf3)"
    return f"RDMA write twin {'AB'[twin]}" if twin is not None else "RDMA write, both twins"


def _floor(profile: LinkProfile, key: Key) -> float | None:
    tool, twin = key
    if tool == "iperf3":
        return profile.tcp_min_gbps
    if twin is None:
        return profile.rdma_write_min_gbps_both_twins
    return profile.rdma_write_min_gbps_per_twin


def _measured(facts: Facts) -> dict[Key, dict[str, list[BandwidthFact]]]:
    by: dict[Key, dict[str, list[BandwidthFact]]] = defaultdict(lambda: defaultdict(list))
    for b in facts.bandwidth:
        by[(b.tool, b.twin)][b.link_id].append(b)
    return by


@check("bw.link")
def check_link(intent: Intent, facts: Facts, out: Out) -> None:
    """Judges each link's bandwidth (RDMA per twin and both twins, TCP) against the profile's
    floor (None: not judged) and against the median of its peer links (stragglers)."""
    if not facts.bandwidth:
        out.skip("no bandwidth probes in the facts (they run with `fabric validate`)")
        return
    prof = intent.profile
    measured = _measured(facts)
    for link in intent.links:
        if ("iperf3", None) not in measured or link.id not in measured[("iperf3", None)]:
            out.skip(f"no TCP measurement on {link.id}", link=link.id)
    for key, per_link in sorted(measured.items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
        values = {lid: statistics.median(v) for lid, facts_ in per_link.items()
                  if (v := [b.gbps for b in facts_ if b.gbps is not None and not b.error])}
        for link_id, runs in per_link.items():
            errors = [b.error for b in runs if b.error]
            if link_id not in values:
                out.fail(f"{_label(key)} on {link_id} did not complete: "
                         f"{errors[0] if errors else 'no result'}", link=link_id,
                         expected=_floor(prof, key), actual=None,
                         hint=_hint(key, link_id))
                continue
            _judge(out, prof, key, link_id, values)


def _judge(out: Out, prof: LinkProfile, key: Key, link_id: str,
           values: dict[str, float]) -> None:
    gbps = values[link_id]
    floor = _floor(prof, key)
    peers = [v for lid, v in values.items() if lid != link_id]
    median = statistics.median(peers) if peers else None
    cut = prof.straggler_fraction * median if median is not None else None
    expected = {"min_gbps": floor, "peer_median_gbps": median,
                "straggler_fraction": prof.straggler_fraction}
    problems = []
    if floor is not None and gbps < floor:
        problems.append(f"below the {floor:g} Gb/s floor of profile {prof.name}")
    if cut is not None and median is not None and gbps < cut:
        problems.append(f"a straggler: below {prof.straggler_fraction:.0%} of its peers' "
                        f"median {median:.1f} Gb/s")
    what = f"{_label(key)} on {link_id}: {gbps:.1f} Gb/s"
    if not problems:
        out.ok(what, link=link_id, expected=expected, actual=gbps)
        return
    secondary = key[0] == "iperf3" and prof.rdma and not (cut is not None and gbps < cut)
    out.add("warn" if secondary else "fail", f"{what}, " + " and ".join(problems),
            link=link_id, expected=expected, actual=gbps, hint=_hint(key, link_id))


def _hint(key: Key, link_id: str) -> str:
    if key[0] == "iperf3":
        return (f"re-run `iperf3 -P 4` over {link_id}; if RDMA is fine, TCP is CPU-bound "
                "(a secondary signal); otherwise see the RDMA hint")
    return (f"reseat the cable of {link_id} and check link.speed; a link that stays at "
            "8-25 Gb/s after re-cabling needs a reboot of both Sparks")
