"""The facts read behind the bandwidth rounds start once every client of the first round has
started (`fabric.probes.bandwidth._AllStarted`), once, also where a client never ran."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import pytest

from fabric.probes.bandwidth import _AllStarted
from fabric.probes.schedule import BandwidthTest


def test_then_runs_once_when_every_host_started() -> None:
    ran: list[int] = []
    latch = _AllStarted(["spark01", "spark03"], lambda: ran.append(1))
    latch.started("spark01")
    latch.started("spark01")  # a host saying it twice is still one host
    assert ran == []
    latch.started("spark03")
    assert ran == [1]
    latch.started("spark03")
    latch.release()
    assert ran == [1]


def test_release_runs_it_for_a_client_that_never_said() -> None:
    ran: list[int] = []
    latch = _AllStarted(["spark01", "spark03"], lambda: ran.append(1))
    latch.started("spark01")
    latch.release()
    assert ran == [1]
    _AllStarted(["spark01"], None).started("spark01")  # nothing to run: a later round


def test_each_rounds_servers_start_behind_the_round_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first round's servers are up when the rounds begin: each other round's start
    once every client of the round before has started (the first round's also sets the facts
    read behind it going), and each round waits for its servers' ports."""
    from fabric.intent.build import load_intent
    from fabric.probes import bandwidth
    from fabric.probes.schedule import schedule_bandwidth

    star16 = load_intent("star16")  # with the lab's cap: 4 tests a round
    capped = dataclasses.replace(star16, profile=dataclasses.replace(
        star16.profile, bandwidth_tests_per_round=4))
    schedule = schedule_bandwidth(capped, 2.0)
    assert len(schedule.rounds) == 4
    events: list[str] = []

    class FakeNornir:
        inventory = type("Inventory", (), {"hosts": {}})()

        def filter(self, filter_func: object = None) -> FakeNornir:
            return self

    def start_servers(nr: object, sched: object, tests: Sequence[BandwidthTest]
                      ) -> dict[str, int]:
        events.append(f"servers of round {tests[0].round + 1}")
        return {f"{t.index}.{leg.twin}": 6000 + t.index for t in tests for leg in t.legs}

    def run(sub: object, task: object, *, hosts: list[str], tests: dict[str, BandwidthTest],
            ports: dict[str, int | None], started: Callable[[str], None],
            name: str, **kw: object) -> tuple[dict[str, list[object]], dict[str, str]]:
        wanted = {f"{t.index}.{leg.twin}" for t in tests.values() for leg in t.legs}
        assert wanted <= {k for k, v in ports.items() if v}, name  # its servers are up
        events.append(f"{name} starts")
        for host in hosts:
            started(host)
        return {h: [] for h in hosts}, {}

    monkeypatch.setattr(bandwidth, "start_servers", start_servers)
    monkeypatch.setattr(bandwidth, "run", run)
    early = {f"{t.index}.{leg.twin}": 5201 for t in schedule.rounds[0] for leg in t.legs}
    later = {i: bandwidth.LaterServers(FakeNornir(), schedule, tests)  # type: ignore[arg-type]
             for i, tests in enumerate(schedule.rounds) if i > 0}
    bandwidth.run_schedule(FakeNornir(), schedule, 2.0, {}, ports=early,  # type: ignore[arg-type]
                           under_way=lambda: events.append("facts behind"), later=later)
    rounds = [e for e in events if e.startswith("bandwidth round")]
    assert rounds == [f"bandwidth round {i} starts" for i in (1, 2, 3, 4)]
    for i in (2, 3, 4):  # started after the round before began, before its own round
        servers = events.index(f"servers of round {i}")
        assert events.index(f"bandwidth round {i - 1} starts") < servers
        assert servers < events.index(f"bandwidth round {i} starts")
    assert events.index("bandwidth round 1 starts") < events.index("facts behind") < \
        events.index("bandwidth round 2 starts")
