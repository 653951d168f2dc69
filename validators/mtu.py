"""mtu: twins and switch lanes carry the fabric MTU, and jumbo DF pings cross every path."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from fabric.facts import Facts, PingFact
from fabric.intent.model import Intent
from fabric.intent.wire import IP_ICMP_HEADERS
from validators.judge import Findings, cabled_lanes, where
from validators.registry import PING, check, needs

#: What mtu judges: the twins' and lanes' MTU, and the jumbo DF ping matrix.
NEEDS = needs("mtu", spark=True, switch=True, probes=(PING,))


@check("mtu.interface")
def check_interface(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cabled twin's MTU against the topology MTU."""
    for intended, sf in out.twins(intent):
        nd = sf.netdevs.get(intended.netdev)
        if nd is None:
            out.skip(f"{where(intended)} not present: MTU not judged (see link.twin_up)",
                     host=intended.host, link=intended.link_id, expected=intent.mtu)
        elif nd.mtu == intent.mtu:
            out.ok(f"{where(intended)} MTU {nd.mtu}", host=intended.host, link=intended.link_id,
                   expected=intent.mtu, actual=nd.mtu)
        else:
            out.fail(f"{where(intended)} on {intended.link_id} has MTU {nd.mtu}, "
                     f"expected {intent.mtu}",
                     host=intended.host, link=intended.link_id, expected=intent.mtu, actual=nd.mtu,
                     hint=f"ip link set dev {intended.netdev} mtu {intent.mtu} (and set mtu: "
                     f"{intent.mtu} in netplan so it survives a reboot)")


@check("mtu.switch")
def check_switch(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cabled lane: mtu >= topology MTU and l2mtu >= the planned l2mtu."""
    for intended, lane, fact in cabled_lanes(intent, out):
        expected = {"mtu": intent.mtu, "l2mtu": intended.l2mtu}
        if fact is None:
            out.skip(f"{intended.host}:{lane.name} not listed: MTU not judged "
                     "(see link.switch_lane)", host=intended.host, link=lane.link_id)
            continue
        actual = {"mtu": fact.mtu, "l2mtu": fact.l2mtu}
        low = [k for k in ("mtu", "l2mtu") if (actual[k] or 0) < expected[k]]
        if not low:
            out.ok(f"{intended.host}:{lane.name} mtu {fact.mtu} l2mtu {fact.l2mtu}",
                   host=intended.host, link=lane.link_id, expected=expected, actual=actual)
            continue
        out.fail(f"{intended.host}:{lane.name} ({lane.link_id}): "
                 + ", ".join(f"{k} {actual[k]} < {expected[k]}" for k in low)
                 + ": jumbo frames to and from " + str(lane.cabled_to) + " vanish silently",
                 host=intended.host, link=lane.link_id, expected=expected, actual=actual,
                 hint=f"/interface/ethernet/set {lane.name} l2mtu={intended.l2mtu} "
                      f"mtu={intent.mtu}")


@dataclass(frozen=True)
class _Pair:
    src_host: str
    src_netdev: str
    dst_host: str
    dst_netdev: str

    def __str__(self) -> str:
        return f"{self.src_host} {self.src_netdev} -> {self.dst_host} {self.dst_netdev}"


def _pair(p: PingFact) -> _Pair:
    return _Pair(p.src_host, p.src_netdev, p.dst_host, p.dst_netdev)


def _path(links: Mapping[tuple[str, str], str], pair: _Pair,
          fallback: str | None) -> tuple[str, ...]:
    """The links a twin-to-twin ping crosses: one (direct) or two (via the switch);
    `links`: each planned (host, netdev)'s link."""
    a, b = links.get((pair.src_host, pair.src_netdev)), links.get((pair.dst_host,
                                                                    pair.dst_netdev))
    path = tuple(dict.fromkeys(x for x in (a, b) if x is not None))
    return path or ((fallback,) if fallback else ())


@check("mtu.path")
def check_path(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges DF pings at MTU-28 between twins sharing a subnet: local errors, black holes."""
    jumbo = intent.mtu - IP_ICMP_HEADERS
    if not facts.pings:
        out.skip("no DF ping probes in the facts (they run with `fabric validate`)",
                 expected=jumbo)
        return
    big: dict[_Pair, PingFact] = {}
    small: dict[_Pair, bool] = defaultdict(bool)
    for p in facts.pings:
        if p.size >= jumbo:
            big[_pair(p)] = p
        else:
            small[_pair(p)] |= p.received > 0
    good: set[str] = set()
    silent: dict[_Pair, tuple[str, ...]] = {}
    seen_links: set[str] = set()
    links = {(i.host, i.netdev): i.link_id for i in intent.interfaces()}
    for pair, p in big.items():
        path = _path(links, pair, p.link_id)
        seen_links.update(path)
        if p.received > 0:
            good.update(path)
        elif p.error and ("mtu" in p.error.lower() or "too long" in p.error):
            link = path[0] if path else None
            out.fail(f"{pair}: {p.size}-byte DF ping refused locally ({p.error}): "
                     f"{pair.src_host} {pair.src_netdev} has a small MTU",
                     host=pair.src_host, link=link, expected=intent.mtu, actual=p.error,
                     hint=f"ip link set dev {pair.src_netdev} mtu {intent.mtu} on "
                     f"{pair.src_host} (see mtu.interface)")
        elif pair in small and not small[pair]:
            out.skip(f"{pair}: small pings fail too; not an MTU problem (see link.twin_up, "
                     "addr.plan)", host=pair.src_host, link=path[0] if path else None)
        else:
            silent[pair] = path
    _judge_black_holes(intent, out, silent, good, jumbo)
    for cable in intent.links:
        if cable.id in good:
            out.ok(f"{jumbo}-byte DF pings cross {cable.id}", link=cable.id, expected=jumbo,
                   actual=jumbo)
        elif cable.id not in seen_links:
            out.skip(f"no DF ping probe crossed {cable.id}", link=cable.id, expected=jumbo)


def _judge_black_holes(intent: Intent, out: Findings, silent: dict[_Pair, tuple[str, ...]],
                       good: set[str], jumbo: int) -> None:
    """A link on some silently failing path and on no working one is where frames vanish."""
    suspects: dict[str, list[_Pair]] = defaultdict(list)
    unexplained: list[_Pair] = []
    for pair, path in silent.items():
        bad = [link_id for link_id in path if link_id not in good]
        if not bad:
            unexplained.append(pair)
        for link_id in bad:
            suspects[link_id].append(pair)
    switch = intent.switch
    for link_id, pairs in suspects.items():
        lane_name = intent.link(link_id).switch_lane
        lane = f" (switch lane {switch.host}:{lane_name})" if switch and lane_name else ""
        names = "; ".join(str(p) for p in pairs[:4]) + (" …" if len(pairs) > 4 else "")
        out.fail(f"{jumbo}-byte DF pings across {link_id}{lane} vanish silently while small "
                 f"pings pass ({names}): an MTU below {intent.mtu} in the middle",
                 host=switch.host if switch and lane_name else None, link=link_id,
                 expected=jumbo, actual="100% loss, no error",
                 hint=(f"/interface/ethernet/set {lane_name} mtu={intent.mtu} "
                       f"l2mtu={switch.l2mtu}" if switch and lane_name else
                       f"check the MTU of every hop on {link_id} (receiving twin included)"))
    for pair in unexplained:
        out.fail(f"{pair}: {jumbo}-byte DF pings vanish silently while small pings pass, but "
                 "each link on the path carries jumbo pings elsewhere",
                 host=pair.src_host, link=(silent[pair] or (None,))[0], expected=jumbo,
                 actual="100% loss, no error",
                 hint=f"check the MTU of {pair.dst_host} {pair.dst_netdev} and of the path")
