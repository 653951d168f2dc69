"""The sustained-trouble hook: runs once per episode after N cycles in a row, re-arms when
the trouble clears, never for a single blip; off unless asked for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from fabric.watch.hook import SustainedHook
from tests.conftest import run_cli

CABLE = "spark02:p0--crs804:qsfp56-dd-2-1"


def _cycle(downs: float, up: float = 1.0) -> list[Metric]:
    d = CounterMetricFamily("fabric_link_downs", "", labels=("cable", "side"))
    d.add_metric([CABLE, "spark"], downs)
    d.add_metric([CABLE, "switch"], downs - 1)
    u = GaugeMetricFamily("fabric_watch_up", "", labels=("host",))
    u.add_metric(["spark03"], up)
    return [d, u]


def test_flapping_runs_the_hook_once_per_episode(tmp_path: Path) -> None:
    out = tmp_path / "events"
    hook = SustainedHook(f"sh -c 'echo $FABRIC_WATCH_EVENT $FABRIC_WATCH_SUBJECT >> {out}'", 3)
    ran = [hook.observe(_cycle(v)) for v in (1, 2, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10)]
    # 2->2 breaks the first streak; 3,4,5 make three in a row; 7->7 clears; 8,9,10 again
    assert [i for i, r in enumerate(ran) if r] == [5, 11]
    assert ran[5] == [("flapping", CABLE)]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(out.read_text().splitlines() if out.exists()
                                                else []) < 2:
        time.sleep(0.05)
    assert out.read_text().splitlines() == [f"flapping {CABLE}"] * 2


def test_a_host_gone_for_n_cycles_runs_it_a_blip_does_not(tmp_path: Path) -> None:
    hook = SustainedHook("true", 2)
    assert [hook.observe(_cycle(1, up)) for up in (0, 1, 0, 0, 0)] == [
        [], [], [], [("host-gone", "spark03")], []]


@pytest.mark.parametrize(("args", "says"), [
    (["--hook", ""], "give a command"),
    (["--hook", "true", "--hook-cycles", "0"], "1 or more"),
])
def test_bad_hook_options_exit_2(args: list[str], says: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["watch", "--once", "-t", "star4", *args], capsys)
    assert code == 2 and says in err, err
