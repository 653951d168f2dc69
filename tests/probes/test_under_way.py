"""The facts read behind the bandwidth rounds start once every client of the first round has
started (`fabric.probes.bandwidth._AllStarted`), once, also where a client never ran."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fabric.probes.bandwidth import _AllStarted


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


def test_the_later_rounds_servers_start_behind_the_first_round(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first round's servers are up when the rounds begin: the others start once
    every client of the first round has started (beside the facts read behind it), and the
    second round waits for their ports."""
    from fabric.intent.build import load_intent
    from fabric.probes import bandwidth
    from fabric.probes.schedule import schedule_bandwidth

    schedule = schedule_bandwidth(load_intent("star8"), 2.0)
    first, rest = schedule.rounds[0], [t for r in schedule.rounds[1:] for t in r]
    events: list[str] = []

    class FakeNornir:
        inventory = type("Inventory", (), {"hosts": {}})()

        def filter(self, filter_func: object = None) -> FakeNornir:
            return self

    def start_servers(nr: object, sched: object, tests: list[object]) -> dict[str, int]:
        events.append(f"servers for {len(tests)} tests")
        return {f"{t.index}.{leg.twin}": 6000 + t.index  # type: ignore[attr-defined]
                for t in tests for leg in t.legs}  # type: ignore[attr-defined]

    def run(sub: object, task: object, *, hosts: list[str], tests: dict[str, object],
            ports: dict[str, int | None], started: Callable[[str], None],
            name: str, **kw: object) -> tuple[dict[str, list[object]], dict[str, str]]:
        events.append(f"{name} starts")
        wanted = {f"{t.index}.{leg.twin}" for t in tests.values()  # type: ignore[attr-defined]
                  for leg in t.legs}  # type: ignore[attr-defined]
        assert wanted <= {k for k, v in ports.items() if v}, name
        for host in hosts:
            started(host)
        return {h: [] for h in hosts}, {}

    monkeypatch.setattr(bandwidth, "start_servers", start_servers)
    monkeypatch.setattr(bandwidth, "run", run)
    early = {f"{t.index}.{leg.twin}": 5201 for t in first for leg in t.legs}
    later = bandwidth.LaterServers(FakeNornir(), schedule, rest)  # type: ignore[arg-type]
    bandwidth.run_schedule(FakeNornir(), schedule, 2.0, {}, ports=early,  # type: ignore[arg-type]
                           under_way=lambda: events.append("facts behind"), later=later)
    assert len(rest) == 4 and events[0] == "bandwidth round 1 starts"
    assert sorted(events[1:3]) == ["facts behind", f"servers for {len(rest)} tests"]
    assert events[3:] == ["bandwidth round 2 starts"]  # after its servers: it used their ports
