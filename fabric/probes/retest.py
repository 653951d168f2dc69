"""A bandwidth test that came out a straggler is run once more before anything is judged.

A cable whose best test one way is below the profile's straggler fraction of the others
(as `validators.bw` judges a straggler) may be slow, or its tests may have lost the CPU or
the wire to something else for part of their seconds: on the lab's two shared cores, a
healthy star8 or star16 failed `bw.link` in about one run of six, a twin at 0.35-0.66 Gb/s
against its peers' 0.97. So every test through such a cable and direction runs again, once,
after the last round and once the facts read beside the rounds are in: alone with the
others re-tested (in rounds that share no NIC or lane, within the schedule's cap), on
servers started for it. Both runs are kept in the report's measurements; a cable's figure is the
best test through it that way (`fabric.probes.bandwidth.cable_facts`), so a slow cable is
slow again and fails, and a test that was only unlucky is not blamed on a cable. As the
re-tests come in, a crossing that looked no worse than the disturbed ones may now be a
straggler: its tests are re-tested too (each test at most once). A run with no straggler
costs nothing more.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable

from fabric.intent.wire import Crossing
from fabric.probes.measure import Measurement
from fabric.probes.schedule import BandwidthTest, Schedule


def straggling_tests(measured: Iterable[Measurement], fraction: float) -> list[int]:
    """The tests (by index) through a straggling crossing: one whose best way through it (a
    cable in one direction, per tool and twin) is below `fraction` of every other crossing's
    best with the same tool and twin (`_reference`: at least their median, as
    `validators.bw` judges it)."""
    rows = [(m, m.gbps) for m in measured if m.gbps is not None and not m.error]
    best: dict[tuple[str, int | None], dict[Crossing, float]] = defaultdict(dict)
    for m, gbps in rows:
        per = best[(m.tool, m.twin)]
        for way in m.crossings:
            per[way] = max(per.get(way, 0.0), gbps)
    slow: set[tuple[str, int | None, Crossing]] = set()
    for kind, per in best.items():
        for way, gbps in per.items():
            peers = [v for w, v in per.items() if w != way]
            if peers and gbps < fraction * _reference(peers):
                slow.add((*kind, way))
    return sorted({m.test for m, _ in rows for way in m.crossings
                   if (m.tool, m.twin, way) in slow})


def _reference(peers: list[float]) -> float:
    """What a crossing is measured against: the higher of its peers' median and their 90th
    percentile. The validator judges against the median once the re-tests are in; before
    them, a round that lost its CPU to something else drags the median down (on the lab's
    star16 with 1 s rounds, three of four rounds measured medians of 0.24-0.6 Gb/s where the
    fourth measured 0.97), and a crossing the re-test would have saved was judged as is."""
    if len(peers) < 2:
        return peers[0]
    return max(statistics.median(peers), statistics.quantiles(peers, n=10)[-1])


def retest_schedule(schedule: Schedule, tests: Iterable[int],
                    first_round: int | None = None) -> Schedule:
    """The tests `tests` of `schedule` in rounds of their own after its last: each in the
    first such round whose tests share no resource with it and hold fewer than the
    schedule's cap; the rounds numbered on from `first_round` (default: after the
    schedule's)."""
    wanted = set(tests)
    rounds: list[list[BandwidthTest]] = []
    for test in (t for t in schedule.tests if t.index in wanted):
        mine = set(test.resources)
        for group in rounds:
            full = schedule.per_round is not None and len(group) >= schedule.per_round
            if not full and not any(mine & set(u.resources) for u in group):
                group.append(test)
                break
        else:
            rounds.append([test])
    first = len(schedule.rounds) if first_round is None else first_round
    return dataclasses.replace(schedule, rounds=tuple(
        tuple(dataclasses.replace(t, round=first + i) for t in group)
        for i, group in enumerate(rounds)))


#: Runs a schedule of re-tests: (their measurements, wall seconds per round).
RunRetests = Callable[[Schedule], tuple[list[Measurement], list[float]]]


def retest_stragglers(schedule: Schedule, measured: list[Measurement], walls: list[float],
                      fraction: float, run: RunRetests
                      ) -> tuple[list[Measurement], list[float], list[BandwidthTest]]:
    """Re-test the tests through straggling crossings with `run`, then those the results
    show straggling next, until none is left that has not run twice; (every measurement,
    every round's wall, the tests re-tested, in their re-test rounds)."""
    retested: list[BandwidthTest] = []
    while again := [i for i in straggling_tests(measured, fraction)
                    if i not in {t.index for t in retested}]:
        retest = retest_schedule(schedule, again, len(walls))
        more, more_walls = run(retest)
        measured, walls = measured + more, walls + more_walls
        retested += retest.tests
    return measured, walls, retested
