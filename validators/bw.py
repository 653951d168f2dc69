"""bw: measured bandwidth per link and direction against the profile's floors and against its
peers (every other link and direction).

A fact's direction (its `Crossing`) follows from its link and the test way that gave it,
`src_host` -> `dst_host`: on a direct cable that way itself; through the switch, in at the
sender's lane (ingress) or out at the receiver's (egress). The probes keep, per cable and
direction, the best test that way, so a crossing is slow only when every test through it
was; `Facts.schedule["measurements"]` names those tests. A fact whose way does not cross its
link (recorded before the probes ran both ways) is judged per link.

Both ways run at once, and an acknowledged transport (TCP, RDMA RC) sends its acks back over
the reverse crossing of the same cable: a way slowed only because its acks queue behind the
slower way back would look slow too. So a slow way whose way back is slow itself and clearly
slower (below the profile's straggler fraction of this way) is a warning that names the way
back, which fails. A cable slow both ways alike (a symmetric degrade) fails both ways.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fabric.facts import BandwidthFact, Facts
from fabric.intent.model import Intent
from fabric.intent.profiles import LinkProfile
from fabric.intent.wire import Crossing, crossing
from fabric.report.model import Status
from validators.judge import Findings
from validators.registry import BANDWIDTH, check, needs

Key = tuple[str, int | None]  # (tool, twin)
Where = tuple[str, Crossing | None]  # (link id, direction over it)


def _label(key: Key) -> str:
    tool, twin = key
    side = "" if twin is None else f" twin {'AB'[twin]}"
    if tool == "iperf3":
        return f"TCP (iperf3){side}"
    return f"RDMA write{side}" if twin is not None else "RDMA write, both twins"


def _floor(profile: LinkProfile, key: Key) -> float | None:
    tool, twin = key
    if tool == "iperf3":
        return profile.tcp_min_gbps
    if twin is None:
        return profile.rdma_write_min_gbps_both_twins
    return profile.rdma_write_min_gbps_per_twin


def _crossing(intent: Intent, b: BandwidthFact) -> Crossing | None:
    try:
        link = intent.link(b.link_id)
    except KeyError:
        return None
    switch = intent.switch.host if intent.switch is not None else None
    return crossing(link, b.src_host, b.dst_host, switch)


def _measured(intent: Intent, facts: Facts) -> dict[Key, dict[Where, list[BandwidthFact]]]:
    by: dict[Key, dict[Where, list[BandwidthFact]]] = defaultdict(lambda: defaultdict(list))
    for b in facts.bandwidth:
        by[(b.tool, b.twin)][(b.link_id, _crossing(intent, b))].append(b)
    return by


#: What bw judges: the bandwidth rounds (the Sparks' RoCE GIDs pick the ib_write_bw indexes).
NEEDS = needs("bw", spark=True, probes=(BANDWIDTH,))


@check("bw.link")
def check_link(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each link's bandwidth in each direction (RDMA per twin and both twins, TCP)
    against the profile's floor (None: not judged) and against the median of every other
    link and direction (stragglers); a result names the direction and the tests that way."""
    if not facts.bandwidth:
        out.skip("no bandwidth probes in the facts (they run with `fabric validate`)")
        return
    prof = intent.profile
    measured = _measured(intent, facts)
    tests = _Tests(facts.schedule.get("measurements"))
    with_tcp = {b.link_id for b in facts.bandwidth if b.tool == "iperf3"}
    for link in intent.links:
        if link.id not in with_tcp:
            out.skip(f"no TCP measurement on {link.id}", link=link.id)
    for key, per_way in sorted(measured.items(),
                               key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1])):
        values = {where: statistics.median(v) for where, facts_ in per_way.items()
                  if (v := [b.gbps for b in facts_ if b.gbps is not None and not b.error])}
        verdicts = {where: _verdict(prof, key, where, values) for where in values}
        for where, runs in per_way.items():
            link_id, way = where
            if where not in values:
                errors = [b.error for b in runs if b.error]
                out.fail(f"{_what(key, where)} did not complete: "
                         f"{errors[0] if errors else 'no result'}", link=link_id,
                         expected=_floor(prof, key), actual=None,
                         hint=_hint(key, where, failed=True))
                continue
            broken = [b.error for b in runs if b.error or b.gbps is None]
            if broken:  # never hidden behind the tests that did complete
                out.warn(f"{_what(key, where)}: {len(broken)} of {len(runs)} tests did not "
                         f"complete ({broken[0] or 'no result'}); judged from the others",
                         link=link_id, hint=_hint(key, where, failed=True))
            _report(out, key, where, verdicts, prof.straggler_fraction, tests.through(key, way),
                    _degraded_init(intent, facts, key, where, verdicts[where]))


def _what(key: Key, where: Where) -> str:
    link_id, way = where
    return f"{_label(key)} on {link_id}" + (f", {way.label}" if way is not None else "")


def _gbps(value: float) -> str:
    return f"{value:.3g}"


@dataclass(frozen=True)
class _Verdict:
    gbps: float
    expected: dict[str, Any]
    problems: tuple[str, ...]
    failing: bool  # a fail, not a warning (TCP below its floor alone only warns on RDMA)


def _verdict(prof: LinkProfile, key: Key, where: Where, values: dict[Where, float]) -> _Verdict:
    gbps = values[where]
    floor = _floor(prof, key)
    peers = [v for w, v in values.items() if w != where]
    median = statistics.median(peers) if peers else None
    cut = prof.straggler_fraction * median if median is not None else None
    expected = {"min_gbps": floor, "peer_median_gbps": median,
                "straggler_fraction": prof.straggler_fraction}
    problems = []
    if floor is not None and gbps < floor:
        problems.append(f"below the {floor:g} Gb/s floor of profile {prof.name}")
    straggler = cut is not None and median is not None and gbps < cut
    if straggler:
        problems.append(f"a straggler: below {prof.straggler_fraction:.0%} of its peers' "
                        f"median {_gbps(median or 0.0)} Gb/s")
    rdma = prof.rdma and key[0] == "iperf3"  # TCP is the secondary signal next to RDMA
    return _Verdict(gbps, expected, tuple(problems), straggler or (bool(problems) and not rdma))


def _way_back(where: Where, verdicts: Mapping[Where, _Verdict],
              fraction: float) -> tuple[Crossing, _Verdict] | None:
    """The reverse crossing of the same cable, when it is slow itself and clearly slower than
    this way: below `fraction` (the profile's straggler fraction) of it."""
    link_id, way = where
    if way is None:
        return None
    for (lk, back), v in verdicts.items():
        if (lk == link_id and back is not None and (back.src, back.dst) == (way.dst, way.src)
                and v.problems and v.gbps < fraction * verdicts[where].gbps):
            return back, v
    return None


def _report(out: Findings, key: Key, where: Where, verdicts: Mapping[Where, _Verdict],
            fraction: float, tests: str, init_hint: str | None = None) -> None:
    link_id = where[0]
    v = verdicts[where]
    what = f"{_what(key, where)}: {_gbps(v.gbps)} Gb/s"
    if not v.problems:
        out.ok(what, link=link_id, expected=v.expected, actual=v.gbps)
        return
    message = f"{what}, " + " and ".join(v.problems) + tests
    status: Status = "fail" if v.failing else "warn"
    back = _way_back(where, verdicts, fraction)
    if back is not None:
        acks = "TCP" if key[0] == "iperf3" else "RDMA"
        message += (f"; its way back {back[0].label} is slower ({_gbps(back[1].gbps)} Gb/s) "
                    f"and carries this way's {acks} acknowledgements while both ways run, so "
                    "this is likely that way's effect")
        status = "warn"
    hint = init_hint if init_hint and back is None else _hint(key, where, back[0] if back
                                                               is not None else None)
    out.add(status, message, link=link_id, expected=v.expected, actual=v.gbps, hint=hint)


def _degraded_init(intent: Intent, facts: Facts, key: Key, where: Where,
                   v: _Verdict) -> str | None:
    """The ConnectX-7 degraded-init hint: one twin's RDMA far below the profile's floor while
    every Spark end of it trains at the profile's speed and PCIe link; None otherwise."""
    prof, (link_id, _way) = intent.profile, where
    floor = _floor(prof, key)
    if key[0] == "iperf3" or key[1] is None or floor is None or not v.failing or (
            v.gbps >= 0.5 * floor or prof.pcie_speed_gts is None or prof.pcie_width is None):
        return None
    ends = []
    for end in intent.link(link_id).ends():
        spec, sf = intent.hosts[end.host], facts.sparks.get(end.host)
        if spec.role != "spark":
            continue
        netdev = spec.ports[end.port][key[1]].netdev
        eth = sf.ethtool.get(netdev) if sf else None
        pcie = sf.host_state.pcie.get(netdev) if sf else None
        if (eth is None or eth.speed_mbps != prof.ethtool_speed_mbps or pcie is None
                or (pcie.speed_gts or 0) < prof.pcie_speed_gts
                or (pcie.width or 0) < prof.pcie_width):
            return None
        ends.append(f"{end.host} {netdev}")
    if not ends:
        return None
    hosts = sorted({e.split()[0] for e in ends})
    return (f"rail twin {'AB'[key[1]]} of {link_id} ({', '.join(ends)}): the link is at "
            f"{prof.ethtool_speed_mbps // 1000}G and PCIe at Gen5 x{prof.pcie_width}, yet RDMA "
            f"runs at {_gbps(v.gbps)} Gb/s: a ConnectX-7 degraded init, which a warm reboot "
            f"keeps. Shut down {', '.join(hosts)}, cold power drain (unplug 30 s), boot, and "
            "validate again")


def _hint(key: Key, where: Where, back: Crossing | None = None, failed: bool = False) -> str:
    link_id, way = where
    state = "failing" if failed else "slow"
    if back is not None:
        return (f"fix {back.label} first (see its result), then validate again; if this way "
                f"stays slow, look at it on its own: re-run over {link_id} one way only")
    if way is None:
        first = f"over {link_id}"
    elif way.where.endswith(" egress"):
        lane = way.where.removesuffix(" egress")
        first = (f"toward {way.dst} only: look at {lane}'s transmit side (a shaper or queue, "
                 f"pause frames) and {way.dst}'s receive side (`ethtool -S` on {way.dst}: "
                 "rx_discards_phy, rx_out_of_buffer)")
    elif way.where.endswith(" ingress"):
        lane = way.where.removesuffix(" ingress")
        first = (f"from {way.src} only: look at {way.src}'s transmit side (`tc qdisc show`, "
                 f"tx_pause) and {lane}'s receive side")
    else:
        first = f"{way.src}→{way.dst} only: look at {way.where.replace(', ', ' and ')}"
    if key[0] == "iperf3":
        return (f"{state} {first}; re-run `iperf3 --bidir -P 4` {_way_of(where)}; if RDMA is "
                "fine, TCP is CPU-bound (a secondary signal); otherwise see the RDMA hint")
    return (f"{state} {first}; reseat the cable of {link_id} and check link.speed; a link that "
            "stays at 8-25 Gb/s after re-cabling needs a reboot of both Sparks")


def _way_of(where: Where) -> str:
    """`over L` or `over L (crs804→spark01)`."""
    link_id, way = where
    return f"over {link_id}" + (f" ({way.src}→{way.dst})" if way is not None else "")


class _Tests:
    """The test directions of `Facts.schedule["measurements"]` (as the probes record them),
    looked up per tool, twin and crossing: `; tests that way: spark04→spark01 0.25 Gb/s, …`."""

    def __init__(self, raw: Any) -> None:
        rows = [m for m in (raw if isinstance(raw, list) else []) if isinstance(m, Mapping)]
        #: The rows by tool, twin and each crossing they made, in their order (indexed once:
        #: every direction of every link asks).
        self.by_way: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
        for m in rows:
            ways = [(m.get("tool"), m.get("twin"), c.get("link"), c.get("src"), c.get("dst"))
                    for c in _list(m.get("crossings"))]
            for index in dict.fromkeys(w for w in ways  # a row once per way it crossed
                                       if all(isinstance(v, str | int | None) for v in w)):
                self.by_way.setdefault(index, []).append(m)

    def through(self, key: Key, way: Crossing | None) -> str:
        if way is None:
            return ""
        found = self.by_way.get((*key, way.link, way.src, way.dst), [])
        if not found:
            return ""
        tests = ", ".join(
            f"{m.get('src')}→{m.get('dst')} "
            + (f"{_gbps(g)} Gb/s" if isinstance(g := m.get("gbps"), (int, float))
               else "failed") for m in found)
        note = "; tests that way: " if len(found) > 1 else "; the only test that way: "
        text = note + tests
        if len(found) == 1:
            others = [c for c in _list(found[0].get("crossings")) if not _same(c, way)]
            if others:
                text += (" (it also crossed " + ", ".join(_text(c) for c in others)
                         + ", which may be the slow one)")
        return text


def _list(value: Any) -> Iterable[Mapping[str, Any]]:
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def _same(c: Mapping[str, Any], way: Crossing) -> bool:
    return (c.get("link"), c.get("src"), c.get("dst")) == (way.link, way.src, way.dst)


def _text(c: Mapping[str, Any]) -> str:
    return f"{c.get('src')}→{c.get('dst')} ({c.get('where')})"
