"""A straggling bandwidth test runs once more (`fabric.probes.retest`): which tests, in which
rounds, and what a cable's figure is made of afterwards."""

from __future__ import annotations

import dataclasses

from fabric.intent.model import Intent
from fabric.probes.bandwidth import cable_facts
from fabric.probes.measure import Measurement, measurement
from fabric.probes.retest import retest_schedule, straggling_tests
from fabric.probes.schedule import BandwidthTest, Schedule, schedule_bandwidth
from fabric.probes.tools import Reading


def _ways(test: BandwidthTest, gbps: float, slow_back: float | None = None
          ) -> list[Measurement]:
    """iperf3 on both twins, both ways; the way back at `slow_back` where given."""
    return [measurement(test, "iperf3", twin, Reading(slow_back if reverse and slow_back
                                                       else gbps, None), 3.0, reverse)
            for twin in (0, 1) for reverse in (False, True)]


def _all(schedule: Schedule, slow: dict[int, float] | None = None) -> list[Measurement]:
    slow = slow or {}
    return [m for t in schedule.tests for m in _ways(t, 0.95, slow.get(t.index))]


def _slow_into(schedule: Schedule, host: str, gbps: float, tests: list[BandwidthTest]
               ) -> list[Measurement]:
    """Every way of `tests` at 0.95, but those received by `host` at `gbps`."""
    return [measurement(t, "iperf3", twin, Reading(
        gbps if (t.client if reverse else t.server) == host else 0.95, None), 3.0, reverse)
            for t in tests for twin in (0, 1) for reverse in (False, True)]


def test_only_the_tests_through_a_straggling_crossing_are_picked(
        intents: dict[str, Intent]) -> None:
    schedule = schedule_bandwidth(intents["star8"], 3.0)
    by_index = {t.index: t for t in schedule.tests}
    assert straggling_tests(_all(schedule), 0.7) == []
    # one unlucky test: every crossing it rode has a healthy best from another test
    assert straggling_tests(_all(schedule, {schedule.tests[0].index: 0.3}), 0.7) == []
    # both tests into spark05 slow: its cable toward it straggles, and both are picked
    slow = _slow_into(schedule, "spark05", 0.6, schedule.tests)
    assert {(by_index[i].client, by_index[i].server)
            for i in straggling_tests(slow, 0.7)} == {("spark04", "spark05"),
                                                      ("spark05", "spark06")}
    assert straggling_tests(_slow_into(schedule, "spark05", 0.7, schedule.tests), 0.7) == []
    failed = [*_all(schedule)[:-1], Measurement(7, 1, "a", "b", (), "iperf3", 1, None,
                                                "no result", 3.0)]
    assert straggling_tests(failed, 0.7) == []  # an error is judged as it is, not re-run


def test_retests_share_no_resource_stay_within_the_cap_and_come_after(
        intents: dict[str, Intent]) -> None:
    schedule = dataclasses.replace(schedule_bandwidth(intents["star8"], 3.0), per_round=3)
    again = retest_schedule(schedule, [t.index for t in schedule.tests])
    assert sorted(t.index for t in again.tests) == sorted(t.index for t in schedule.tests)
    for i, group in enumerate(again.rounds):
        assert len(group) <= 3 and {t.round for t in group} == {len(schedule.rounds) + i}
        used = [r for t in group for r in t.resources]
        assert len(used) == len(set(used))  # no NIC or lane twice in a round
    neighbours = [t.index for t in schedule.tests if "spark02" in (t.client, t.server)]
    assert len(retest_schedule(schedule, neighbours).rounds) == 2  # both hold spark02's NIC


def test_a_cable_is_judged_on_its_best_run(intents: dict[str, Intent]) -> None:
    """Both tests into spark02 unlucky, then a healthy re-test: its cable is at full speed
    that way; slow both times: it stays slow."""
    schedule = schedule_bandwidth(intents["star4"], 3.0)
    first = _slow_into(schedule, "spark02", 0.3, schedule.tests)
    picked = straggling_tests(first, 0.7)
    by_index = {t.index: t for t in schedule.tests}
    assert {(by_index[i].client, by_index[i].server) for i in picked} == {
        ("spark01", "spark02"), ("spark02", "spark03")}
    again = retest_schedule(schedule, picked).tests
    for retest_gbps, expect in ((0.95, 0.95), (0.3, 0.3)):
        facts = cable_facts(schedule, first + _slow_into(schedule, "spark02", retest_gbps,
                                                         again))
        into = {f.gbps for f in facts if f.dst_host == "spark02"
                and f.link_id.startswith("spark02:")}
        assert into == {expect}


def test_a_round_that_lost_its_cpu_does_not_hide_a_straggler() -> None:
    """Most crossings slow from one disturbed round: they are measured against the healthy
    ones (the 90th percentile), not against their own median."""
    from fabric.probes.retest import _reference

    assert _reference([0.3] * 6 + [0.99] * 4) >= 0.98
    assert _reference([0.99] * 9 + [0.3]) == 0.99  # a healthy lab: its median
    assert _reference([0.5]) == 0.5


def test_the_retests_run_each_straggling_test_once_and_a_slow_cable_stays_slow(
        intents: dict[str, Intent]) -> None:
    """The tests into a cable slow every time are re-tested once each, in rounds numbered
    after the schedule's; the loop ends there and the cable stays slow; a test that was only
    unlucky comes back healthy."""
    from fabric.probes.retest import retest_stragglers

    schedule = schedule_bandwidth(intents["star8"], 3.0)
    first = _slow_into(schedule, "spark06", 0.3, schedule.tests)
    runs: list[list[int]] = []

    def run(retest: Schedule) -> tuple[list[Measurement], list[float]]:
        runs.append(sorted(t.index for t in retest.tests))
        return _slow_into(retest, "spark06", 0.3, retest.tests), [3.0] * len(retest.rounds)

    measured, walls, retested = retest_stragglers(schedule, first, [3.0, 3.0], 0.7, run)
    into = {t.index for t in schedule.tests if "spark06" in (t.client, t.server)}
    assert runs == [sorted(into)] and {t.index for t in retested} == into
    assert {t.round for t in retested} <= {2, 3} and len(walls) == 2 + len(
        {t.round for t in retested})
    slow = {f.gbps for f in cable_facts(schedule, measured)
            if f.dst_host == "spark06" and f.link_id.startswith("spark06:")}
    assert slow == {0.3}
    healthy = retest_stragglers(schedule, first, [3.0, 3.0], 0.7, lambda r: (
        _slow_into(r, "spark06", 0.99, r.tests), [3.0] * len(r.rounds)))[0]
    assert {f.gbps for f in cable_facts(schedule, healthy)
            if f.dst_host == "spark06" and f.link_id.startswith("spark06:")} == {0.99}
