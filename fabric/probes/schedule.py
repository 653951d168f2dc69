"""Bandwidth test schedule: which Sparks test against which, in how many parallel rounds.

Resources. A test holds the ConnectX-7 of both Sparks (``nic:<host>``: p0 and p1 share the
same two PCIe Gen5 x4 links, one per twin, so a ring node cannot test both cables at full rate
at once) and, on a switch, the lane of each cable (``lane:<name>``). Tests in one round share
no resource, so they run in parallel without disturbing each other.

Both ways at once. Every test sends both ways at the same time (``iperf3 --bidir``; for
RDMA one ``ib_write_bw`` each way, since ``ib_write_bw -b`` reports only the sum), so a cable
is judged per direction at no extra round: a lane or port that is slow one way only (a
shaper, a bad transmitter) cannot hide behind a healthy test the other way. A `Crossing` is
one cable in one direction; each direction of a test crosses its cables in that direction.
(The acknowledgements of each way then share the reverse crossing with the data of the way
back; `validators.bw` allows for that when it judges.)

Ring (direct cables). Every cable is one test between its two ends, which measures its two
directions directly; rounds are a proper edge colouring of the ring: 2 rounds for an even
ring, 3 for an odd one.

Star. A test x<->y crosses x's cable and y's cable: x->y goes in at the switch lane of x
(ingress) and out at the lane of y (egress). The Sparks are paired along a Hamiltonian cycle
in node order (s1-s2, s2-s3, ..., sn-s1): every Spark meets two different partners, so every
crossing rides exactly two test directions (x's egress: from both partners of x), and those
two go on through different crossings. A single slow crossing then makes exactly its two
test directions slow and is the only crossing they share; every other crossing also rides a
healthy test direction. The per-crossing figure is the best test direction through it (a
cable is at least as fast one way as its best test that way). The cycle is coloured into 2
rounds (even n) or 3 (odd n). With only two Sparks there is one test and a slow direction
blames the sender's ingress and the receiver's egress alike.

Lower bound. No schedule can finish before the busiest resource has run all its tests:
``max over resources of (tests using it) x (per-test duration)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fabric.intent.model import Intent, Link, RailEnd
from fabric.intent.wire import Crossing, crossing


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

    def reversed(self) -> Leg:
        """The same twin path the other way: the server twin sends to the client twin."""
        return Leg(self.twin, self.server_netdev, self.server_addr, self.server_rdma,
                   self.client_netdev, self.client_addr, self.client_rdma)


@dataclass(frozen=True)
class BandwidthTest:
    """One pairwise test, both ways at once: `client` runs the client(s), `server` the
    server(s); `forward` (client -> server) and `reverse` are the crossings of each way."""

    index: int
    round: int
    client: str
    server: str
    links: tuple[str, ...]
    legs: tuple[Leg, ...]
    resources: tuple[str, ...]
    forward: tuple[Crossing, ...] = ()
    reverse: tuple[Crossing, ...] = ()

    def sender(self, reverse: bool) -> str:
        return self.server if reverse else self.client

    def receiver(self, reverse: bool) -> str:
        return self.client if reverse else self.server

    def crossings(self, reverse: bool) -> tuple[Crossing, ...]:
        return self.reverse if reverse else self.forward

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "round": self.round, "client": self.client,
                "server": self.server, "links": list(self.links),
                "twins": [leg.twin for leg in self.legs], "resources": list(self.resources),
                "forward": [c.label for c in self.forward],
                "reverse": [c.label for c in self.reverse]}


@dataclass(frozen=True)
class Schedule:
    """Rounds of tests that share no resource; `test_s` is the wall time of one test."""

    kind: str
    scheme: str
    rounds: tuple[tuple[BandwidthTest, ...], ...]
    test_s: float
    #: the profile's cap on tests at once (None: none)
    per_round: int | None = None

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
        """The busiest resource's tests, or with a cap the rounds the cap forces, whichever
        is more, times the test's length."""
        capped = -(-len(self.tests) // self.per_round) if self.per_round else 0
        return max(self.busiest[1], capped) * self.test_s

    def to_dict(self) -> dict[str, Any]:
        name, n = self.busiest
        return {"kind": self.kind, "scheme": self.scheme, "rounds": len(self.rounds),
                "tests": len(self.tests), "test_s": self.test_s,
                "planned_s": self.planned_s, "lower_bound_s": self.lower_bound_s,
                "busiest_resource": name, "busiest_tests": n,
                "plan": [[t.to_dict() for t in r] for r in self.rounds]}

    def describe(self) -> str:
        """One human line per round plus the totals (printed to stderr before running)."""
        lines = [f"bandwidth schedule ({self.scheme}): {len(self.tests)} tests, both ways, in "
                 f"{len(self.rounds)} rounds x {self.test_s:g} s = {self.planned_s:g} s; "
                 f"lower bound {self.busiest[1]} tests on {self.busiest[0]} x "
                 f"{self.test_s:g} s = {self.lower_bound_s:g} s"]
        for i, r in enumerate(self.rounds):
            pairs = ", ".join(f"{t.client}<->{t.server}" for t in r)
            lines.append(f"  round {i + 1}: {pairs}")
        return "\n".join(lines)


def schedule_bandwidth(intent: Intent, test_s: float,
                       hosts: Iterable[str] | None = None) -> Schedule:
    """The schedule for the intent (only tests whose two Sparks are in `hosts`, if given)."""
    wanted = None if hosts is None else set(hosts)
    switch = intent.switch.host if intent.switch is not None else None
    if switch is not None:
        scheme = ("star: Hamiltonian cycle over the Sparks, each meets two partners, both "
                  "ways: two tests per lane direction")
        raw = _star_tests(intent, wanted)
    else:
        scheme = "direct: one test per cable, both directions, proper edge colouring"
        raw = _direct_tests(intent, wanted)
    cap = intent.profile.bandwidth_tests_per_round
    colours = capped(colour(raw), cap)
    n_rounds = max(colours, default=-1) + 1
    rounds: list[list[BandwidthTest]] = [[] for _ in range(n_rounds)]
    for i, (test, c) in enumerate(zip(raw, colours, strict=True)):
        links = [intent.link(lk) for lk in test.links]
        rounds[c].append(BandwidthTest(i, c, test.client, test.server, test.links, test.legs,
                                       test.resources,
                                       _crossings(links, test.client, test.server, switch),
                                       _crossings(links, test.server, test.client, switch)))
    if cap:
        scheme += f"; at most {cap} tests at once (profile {intent.profile.name})"
    return Schedule(intent.kind, scheme, tuple(tuple(r) for r in rounds), test_s, cap)


def capped(colours: Sequence[int], cap: int | None) -> list[int]:
    """Rounds of at most `cap` tests: each round split, in order, into chunks (a part of a
    round still shares no resource)."""
    if not cap:
        return list(colours)
    out = [0] * len(colours)
    next_round = 0
    for c in sorted(set(colours)):
        members = [i for i, x in enumerate(colours) if x == c]
        for k, i in enumerate(members):
            out[i] = next_round + k // cap
        next_round += -(-len(members) // cap)
    return out


def _crossings(links: Sequence[Link], src: str, dst: str,
               switch: str | None) -> tuple[Crossing, ...]:
    """The crossings of traffic src -> dst, in path order (from the sender's cable on)."""
    found = [c for lk in links if (c := crossing(lk, src, dst, switch)) is not None]
    return tuple(sorted(found, key=lambda c: c.src != src))


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


def localise_crossings(schedule: Schedule, failing: set[tuple[int, bool]]) -> set[Crossing]:
    """Crossings to blame for the failing test directions (test index, reverse): crossed by
    every failing one and by no passing one."""
    ways = [(t.index, rev, set(t.crossings(rev))) for t in schedule.tests
            for rev in (False, True)]
    bad = [cs for i, rev, cs in ways if (i, rev) in failing]
    if not bad:
        return set()
    healthy = {c for i, rev, cs in ways if (i, rev) not in failing for c in cs}
    return set.intersection(*bad) - healthy


def crossing_coverage(schedule: Schedule) -> dict[Crossing, int]:
    """How many test directions run through each crossing."""
    return dict(Counter(c for t in schedule.tests for rev in (False, True)
                        for c in t.crossings(rev)))
