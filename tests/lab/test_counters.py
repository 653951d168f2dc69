"""counters on a configured star4 lab.

- Healthy: `fabric validate --only counters` runs the ping matrix and the bandwidth rounds
  between two counter snapshots (the family needs traffic to judge) and passes: every twin's
  carrier_changes and kernel drops/errors are judged, what veth cannot count is a skip that
  says why, and nothing fails.
- The switch's lanes are judged too: the RouterOS emulator prints each lane's kernel counters
  (link-downs from carrier_down_count, packets/drops/errors from stats64, tx-queue-drop from
  the root qdisc), and only those veth has a source for.
- A lane bounced in the switch namespace (`ip link set LANE down; ip link set LANE up`)
  between the two snapshots fails counters.flaps on both twins of its cable and on the lane
  (link-downs +1), naming the link.
  The snapshots are driven directly (collect facts, snapshot, bounce, wait for the carrier,
  snapshot) so the bounce lands inside the window every time, with no timing guess.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fabric.cli.common import resolve_target
from fabric.collect.gather import collect_facts
from fabric.facts import Facts
from fabric.lab.lifecycle.registry import LabInfo
from fabric.probes.counters import counter_window, snapshot_reader
from fabric.remote.nornir_setup import make_nornir
from fabric.report.model import CheckResult
from tests.lab.conftest import CABLES_UP_WITHIN_S, cables_up, eventually, failing, validate
from validators import run_checks

pytestmark = pytest.mark.lab

BOUNCED = "qsfp56-dd-3-1"
LINK = f"spark03:p0--crs804:{BOUNCED}"


@pytest.fixture(scope="module")
def lab(star4_pushed: LabInfo) -> LabInfo:
    """The shared configured star4, every cable up."""
    return star4_pushed


def test_healthy_only_counters_runs_the_probes_and_passes(lab: LabInfo, tmp_path: Path) -> None:
    code, report, err = validate(lab.name, tmp_path, "--only", "counters")
    assert code == 0 and not failing(report), json.dumps(failing(report), indent=1) + err[-2000:]
    assert report["families"] == ["counters"]
    assert report["schedule"]["rounds"] >= 1  # the bandwidth rounds ran inside the window
    results = report["results"]
    assert {r["check"].split(".")[0] for r in results} == {"counters"}
    flaps = [r for r in results if r["check"] == "counters.flaps"]
    twins = [r for r in flaps if r["host"] != "crs804"]
    assert len(twins) == 8 and all(r["status"] == "pass" for r in twins), flaps
    assert all("carrier_changes +0" in r["message"] and "during ping + bandwidth" in r["message"]
               for r in twins)
    lanes = [r for r in flaps if r["host"] == "crs804"]
    assert len(lanes) == 4 and all(r["status"] == "pass" and "link-downs +0" in r["message"]
                                   for r in lanes), lanes
    drops = [r for r in results if r["check"] == "counters.drops" and r["status"] == "pass"]
    assert len([r for r in drops if "rx_dropped +" in r["message"]]) == 8, drops
    lane_drops = [r for r in drops if r["host"] == "crs804"]
    assert len(lane_drops) == 4 and all(
        {"interface:rx-drop", "interface:tx-drop", "interface:tx-queue-drop",
         "ethernet:rx-drop", "ethernet:rx-overflow", "ethernet:tx-drop"} == set(r["actual"])
        for r in lane_drops), lane_drops
    errors = [r for r in results if r["check"] == "counters.errors" and r["host"] == "crs804"
              and r["status"] == "pass"]
    assert len(errors) == 4 and all("rx-fcs-error +0" in r["message"] for r in errors), errors
    for r in results:
        assert r["message"], r
        if r["status"] == "skip":  # what veth/the emulator cannot count, or a lossy fabric
            assert ("not available" in r["message"] or "no RDMA" in r["message"]
                    or (r["check"] == "counters.lossless" and "lossy" in r["message"])), r
    assert any(r["check"] == "counters.retrans" and r["status"] == "skip" for r in results)


def _window_with_bounce(info: LabInfo) -> tuple[Facts, float]:
    """Facts with a counter window around a bounce of BOUNCED, and the bounce's duration."""
    target = resolve_target(info.name, None, None)
    nr = make_nornir(target, workers=8)
    try:
        facts = collect_facts(target, nornir=nr)
        assert not facts.errors, facts.errors
        take = snapshot_reader(nr, target.intent, facts)
        before = take()
        started = time.monotonic()
        netns = info.namespaces["crs804"]
        for state in ("down", "up"):
            subprocess.run(["ip", "-n", netns, "link", "set", "dev", BOUNCED, state],
                           check=True, timeout=10)
        assert eventually(lambda: cables_up(info), timeout=CABLES_UP_WITHIN_S), \
            f"{BOUNCED} did not come back after the bounce"
        after = take()
        wall = time.monotonic() - started
    finally:
        nr.close_connections()
    window = counter_window(before, after, ("lane bounce",), wall)
    return dataclasses.replace(facts, counters=window), wall


@pytest.fixture(scope="module")
def bounced(lab: LabInfo) -> list[CheckResult]:
    facts, _ = _window_with_bounce(lab)
    target = resolve_target(lab.name, None, None)
    return run_checks(target.intent, facts, {"counters"})


def _bad(results: list[CheckResult]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(r) for r in results if r.status in ("fail", "error", "warn")]


def test_bounced_lane_fails_flaps_naming_its_link(bounced: list[CheckResult]) -> None:
    bad = _bad(bounced)
    assert bad and all(r["link"] == LINK and r["check"] == "counters.flaps" for r in bad), \
        json.dumps(bad, indent=1)
    spark = [r for r in bad if r["host"] == "spark03"]
    assert {r["message"].split(" (p0")[0] for r in spark} == {
        "spark03 enp1s0f0np0", "spark03 enP2p1s0f0np0"}, json.dumps(bad, indent=1)
    for r in spark:
        # down and up again: at least two carrier changes, each one too many
        assert LINK in r["message"] and "carrier_changes +" in r["message"], r
        assert r["actual"]["ip:carrier_changes"] >= 2 and r["expected"] == {
            "ip:carrier_changes": 0}, r
    others = [r for r in bounced if r.check == "counters.flaps" and r.link != LINK]
    assert others and all(r.status == "pass" for r in others)


def test_bounced_lane_counts_a_link_down_on_the_switch(bounced: list[CheckResult]) -> None:
    lane = [r for r in bounced if r.check == "counters.flaps" and r.host == "crs804"
            and r.link == LINK]
    assert [r.status for r in lane] == ["fail"] and "link-downs +1" in lane[0].message
