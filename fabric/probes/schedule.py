"""Bandwidth test schedule: which Sparks test against which, in how many parallel rounds.

Resources. A test holds the ConnectX-7 of both Sparks (``nic:<host>``: p0 and p1 share the
same two PCIe Gen5 x4 links, one per twin, so a ring node cannot test both cables at full rate
at once) and, on a switch, the lane of each cable (``lane:<name>``). Tests in one round share
no resource, so they run in parallel without disturbing each other.

Ring (direct cables). Every cable is one test between its two ends; rounds are a proper edge
colouring of the ring: 2 rounds for an even ring, 3 for an odd one.

Star. A test between two Sparks crosses two cables, so one slow test cannot say which cable
is slow. The Sparks are paired along a Hamiltonian cycle in node order (s1-s2, s2-s3, ...,
sn-s1): every Spark meets two different partners. A single slow cable k then makes exactly
its two tests slow, and k is the only cable those two tests share; every other cable also
rides a healthy test. The per-cable figure is the best test that crossed it (a cable is at
least as fast as its best test). The cycle is coloured into 2 rounds (even n) or 3 (odd n).
With only two Sparks there is one test and a slow result blames both cables.

Lower bound. No schedule can finish before the busiest resource has run all its tests:
``max over resources of (tests using it) x (per-test duration)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fabric.intent.model import Intent, Link, RailEnd


@dataclass(frozen=True)
class Leg:
    """One twin's path of a test: client twin -> server twin, both on the same rail."""

    twin: int
    client_netdev: str
    client_addr: str
    client_rdma: str | None
    server_netdev: str
    server_addr: str
    server_rdma: str | None


@dataclass(frozen=True)
class BandwidthTest:
    """One pairwise test: `client` runs the client(s), `server` the server(s)."""

    index: int
    round: int
    client: str
    server: str
    links: tuple[str, ...]
    legs: tuple[Leg, ...]
    resources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "round": self.round, "client": self.client,
                "server": self.server, "links": list(self.links),
                "twins": [leg.twin for leg in self.legs], "resources": list(self.resources)}


@dataclass(frozen=True)
class Schedule:
    """Rounds of tests that share no resource; `test_s` is the wall time of one test."""

    kind: str
    scheme: str
    rounds: tuple[tuple[BandwidthTest, ...], ...]
    test_s: float

    @property
    def tests(self) -> list[BandwidthTest]:
        return [t for r in self.rounds for t in r]

    @property
    def planned_s(self) -> float:
        return len(self.rounds) * self.test_s

    @property
    def busiest(self) -> tuple[str | None, int]:
        """The resource used by the most tests, and how many."""
        counts = Counter(r for t in self.tests for r in t.resources)
        if not counts:
            return None, 0
        name, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        return name, n

    @property
    def lower_bound_s(self) -> float:
        return self.busiest[1] * self.test_s

    def to_dict(self) -> dict[str, Any]:
        name, n = self.busiest
        return {"kind": self.kind, "scheme": self.scheme, "rounds": len(self.rounds),
                "tests": len(self.tests), "test_s": self.test_s,
                "planned_s": self.planned_s, "lower_bound_s": self.lower_bound_s,
                "busiest_resource": name, "busiest_tests": n,
                "plan": [[t.to_dict() for t in r] for r in self.rounds]}

    def describe(self) -> str:
        """One human line per round plus the totals (printed to stderr before running)."""
        lines = [f"bandwidth schedule ({self.scheme}): {len(self.tests)} tests in "
                 f"{len(self.rounds)} rounds x {self.test_s:g} s = {self.planned_s:g} s; "
                 f"lower bound {self.busiest[1]} tests on {self.busiest[0]} x "
                 f"{self.test_s:g} s = {self.lower_bound_s:g} s"]
        for i, r in enumerate(self.rounds):
            pairs = ", ".join(f"{t.client}->{t.server}" for t in r)
            lines.append(f"  round {i + 1}: {pairs}")
        return "\n".join(lines)


def plan_bandwidth(intent: Intent, test_s: float, hosts: Iterable[str] | None = None) -> Schedule:
    """The schedule for the intent (only tests whose two Sparks are in `hosts`, if given)."""
    wanted = None if hosts is None else set(hosts)
    if intent.switch is not None:
        scheme = "star: Hamiltonian cycle over the Sparks, each meets two partners"
        raw = _star_tests(intent, wanted)
    else:
        scheme = "direct: one test per cable, proper edge colouring"
        raw = _direct_tests(intent, wanted)
    colours = colour(raw)
    n_rounds = max(colours, default=-1) + 1
    rounds: list[list[BandwidthTest]] = [[] for _ in range(n_rounds)]
    for i, (test, c) in enumerate(zip(raw, colours, strict=True)):
        rounds[c].append(BandwidthTest(i, c, test.client, test.server, test.links, test.legs,
                                       test.resources))
    return Schedule(intent.kind, scheme, tuple(tuple(r) for r in rounds), test_s)


@dataclass(frozen=True)
class _Raw:
    client: str
    server: str
    links: tuple[str, ...]
    legs: tuple[Leg, ...]
    resources: tuple[str, ...]


def _addr(end: RailEnd) -> str:
    assert end.address is not None
    return str(end.address.ip)


def _spark_end(rail_a: RailEnd, rail_b: RailEnd, host: str) -> RailEnd:
    return rail_a if rail_a.host == host else rail_b


def _leg(twin: int, client: RailEnd, server: RailEnd) -> Leg:
    return Leg(twin, client.netdev, _addr(client), client.rdma, server.netdev, _addr(server),
               server.rdma)


def _direct_tests(intent: Intent, wanted: set[str] | None) -> list[_Raw]:
    out: list[_Raw] = []
    for link in intent.links:
        a, b = link.a.host, link.b.host
        if wanted is not None and not {a, b} <= wanted:
            continue
        legs = tuple(_leg(r.twin, r.a, r.b) for r in link.rails
                     if r.a.address is not None and r.b.address is not None)
        if legs:
            out.append(_Raw(a, b, (link.id,), legs, (f"nic:{a}", f"nic:{b}")))
    return out


def _star_tests(intent: Intent, wanted: set[str] | None) -> list[_Raw]:
    assert intent.switch is not None
    switch = intent.switch.host
    cable: dict[str, Link] = {}
    for spark in intent.sparks:
        links = [lk for lk in intent.links_of(spark.name) if switch in (lk.a.host, lk.b.host)]
        if links and (wanted is None or spark.name in wanted):
            cable[spark.name] = links[0]
    order = list(cable)
    if len(order) < 2:
        return []
    pairs = [(order[0], order[1])] if len(order) == 2 else [
        (order[i], order[(i + 1) % len(order)]) for i in range(len(order))]
    return [_star_pair(cable[x], cable[y], x, y, switch) for x, y in pairs]


def _star_pair(lx: Link, ly: Link, x: str, y: str, switch: str) -> _Raw:
    legs: list[Leg] = []
    for rx in lx.rails:
        ry = next((r for r in ly.rails if r.twin == rx.twin), None)
        if ry is None:
            continue
        ex, ey = _spark_end(rx.a, rx.b, x), _spark_end(ry.a, ry.b, y)
        if ex.address is None or ey.address is None:
            continue
        if ex.address.network != ey.address.network:
            continue
        legs.append(_leg(rx.twin, ex, ey))
    resources = [f"nic:{x}", f"nic:{y}"]
    resources += [f"lane:{lk.end_of(switch).port}" for lk in (lx, ly)]
    return _Raw(x, y, (lx.id, ly.id), tuple(legs), tuple(resources))


def colour(tests: Sequence[_Raw]) -> list[int]:
    """Round per test: fewest rounds such that tests in a round share no resource.

    Exact (backtracking) for the small graphs a fabric has, from the lower bound up; greedy
    if the search is too long.
    """
    if not tests:
        return []
    lower = max(Counter(r for t in tests for r in t.resources).values())
    for k in range(lower, len(tests) + 1):
        found = _try_colour(tests, k)
        if found is not None:
            return found
    return list(range(len(tests)))


def _try_colour(tests: Sequence[_Raw], k: int, budget: int = 20000) -> list[int] | None:
    colours = [-1] * len(tests)
    steps = 0

    def clash(i: int, c: int) -> bool:
        mine = set(tests[i].resources)
        return any(colours[j] == c and mine & set(tests[j].resources) for j in range(i))

    def place(i: int) -> bool:
        nonlocal steps
        if i == len(tests):
            return True
        steps += 1
        if steps > budget:
            return False
        for c in range(k):
            if not clash(i, c):
                colours[i] = c
                if place(i + 1):
                    return True
                colours[i] = -1
        return False

    return colours if place(0) else None


def localise(schedule: Schedule, failing: set[int]) -> set[str]:
    """Cables to blame: shared by every failing test and crossed by no passing test."""
    bad = [t for t in schedule.tests if t.index in failing]
    if not bad:
        return set()
    common = set(bad[0].links).intersection(*(set(t.links) for t in bad[1:]))
    healthy = {lk for t in schedule.tests if t.index not in failing for lk in t.links}
    return common - healthy
