"""bench/lab_floor.py's floor driver runs what the toolkit's own plan says, and its scripts
fail only where a judged command failed (the timing itself is the bench's, never asserted)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric.intent.build import load_intent
from fabric.probes.ping import ping_probes
from fabric.probes.schedule import schedule_bandwidth

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCH))
    import floor_driver
    import lab_floor
    return lab_floor, floor_driver


@pytest.mark.parametrize("topology", ["star8", "star16"])
def test_the_floor_plan_is_the_toolkits_plan(bench: Any, topology: str) -> None:
    lab_floor, _ = bench
    intent = load_intent(topology)
    sparks = sorted(h.name for h in intent.sparks)
    logins = {s: {"address": f"addr-{s}"} for s in sparks}
    plan, bound = lab_floor.plan_of(intent, logins)
    test_s = intent.profile.bandwidth_test_s
    schedule = schedule_bandwidth(intent, test_s, hosts=sparks)
    assert bound == len(schedule.rounds) * test_s
    assert sorted(plan["sparks"]) == sparks
    jumbo = [p for p in ping_probes(intent, sources=sparks)
             if p.payload == intent.mtu - 28]
    assert sum(len(s["pings"]) for s in plan["sparks"].values()) == len(jumbo)
    for name, spark in plan["sparks"].items():
        assert spark["address"] == f"addr-{name}"
        assert spark["counters"] == ["ip -s -s -j link show"] + [
            f"ethtool -S {i.netdev}" for i in intent.interfaces(name)]
    servers = [s for spark in plan["sparks"].values() for s in spark["servers"]]
    clients = [c for rnd in plan["rounds"] for lines in rnd.values() for c in lines]
    assert len(plan["rounds"]) == len(schedule.rounds)
    assert len(servers) == len(clients) == sum(len(t.legs) for t in schedule.tests)
    served = [re.search(r"-p (\d+) -B (\S+)", s).groups() for s in servers]  # type: ignore[union-attr]
    asked = [re.search(r"-c (\S+) .*-p (\d+)", c).groups()[::-1] for c in clients]  # type: ignore[union-attr]
    assert len(set(served)) == len(served)  # one server per port and address
    assert sorted(asked) == sorted(served)  # each client leg to its own server
    assert all(f"-t {test_s:g}" in c and c.endswith("--bidir") for c in clients)


@pytest.mark.parametrize(("judged", "unjudged", "code"), [
    (["true", "true"], ("false",), 0),
    (["true", "false"], ("true",), 1),
    ([], ("false",), 0),
])
def test_a_stage_fails_only_on_a_judged_command(bench: Any, judged: list[str],
                                                unjudged: tuple[str, ...], code: int) -> None:
    _, floor_driver = bench
    script = floor_driver.parallel(judged, unjudged)
    assert subprocess.run(["bash", "-c", script], check=False).returncode == code
