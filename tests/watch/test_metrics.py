"""Readings -> samples: labels from the intent, counters as read (absent, never 0), LLDP
match, a host that did not answer has no link samples."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from fabric.facts import ETHTOOL, IP, CounterSnapshot, PortCounters
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.parsers.records import LldpNeighbor
from fabric.remote.batch import split_batch
from fabric.watch import labels
from fabric.watch.metrics import cycle_metrics, lldp_matches, twin_lldp_matches
from fabric.watch.readings import HostStatus, LinkState, SparkReading, SwitchReading
from fabric.watch.reads import parse_lldp, parse_sysfs, spark_script
from fabric.watch.serve import LastCycle, registry_with
from tests.conftest import INVENTORY


@pytest.fixture(scope="module")
def star4() -> Intent:
    return load_intent("star4", INVENTORY)


def _spark(intent: Intent, host: str, carrier_changes: int = 4) -> SparkReading:
    ports = {t.twin: PortCounters(t.twin, {IP: {"carrier_changes": carrier_changes,
                                                "rx_errors": 0, "tx_errors": 7},
                                           ETHTOOL: {"rx_pause_ctrl_phy": 11}})
             for t in labels.twins(intent, host)}
    links = {t.twin: LinkState(9000, 200000, True, 3, 2) for t in labels.twins(intent, host)}
    return SparkReading(host, links, CounterSnapshot(host, "now", ports))


def _switch(neighbors: list[dict[str, Any]]) -> SwitchReading:
    iface = {f"qsfp56-dd-{i}-1": {"name": f"qsfp56-dd-{i}-1", "running": "true",
                                  "actual-mtu": "9000", "link-downs": "5", "rx-error": "1"}
             for i in range(1, 5)}
    return SwitchReading("crs804", iface, {}, neighbors)


def _exposition(intent: Intent, readings: dict[str, Any], up: dict[str, bool]) -> str:
    statuses = {h: HostStatus(h, ok, 0.1) for h, ok in up.items()}
    last = LastCycle()
    last.update(cycle_metrics(intent, readings, statuses, 0.2, 15.0, 1.0))
    return generate_latest(registry_with(last)).decode()


def test_twins_carry_cable_spark_twin_lane_and_direction(star4: Intent) -> None:
    text = _exposition(star4, {"spark02": _spark(star4, "spark02")}, {"spark02": True})
    labels_ = ('cable="spark02:p0--crs804:qsfp56-dd-2-1",direction="tx",'
               'lane="qsfp56-dd-2-1",rail="0",side="spark",spark="spark02",twin="enp1s0f0np0"')
    assert f"fabric_link_errors_total{{{labels_}}} 7.0" in text
    assert "fabric_link_pause_frames_total{" in text
    assert 'fabric_link_speed_mbps{cable="spark02:p0--crs804:qsfp56-dd-2-1"' in text
    assert 'fabric_watch_up{host="spark02"} 1.0' in text
    # what no source reported is absent, not 0
    assert "fabric_rdma_cnp_total{" not in text and "fabric_link_pfc_frames_total{" not in text


def test_a_host_that_did_not_answer_has_health_but_no_link_samples(star4: Intent) -> None:
    text = _exposition(star4, {"spark01": _spark(star4, "spark01")},
                       {"spark01": True, "spark03": False})
    assert 'fabric_watch_up{host="spark03"} 0.0' in text
    assert 'spark="spark03"' not in text.split("fabric_cable_info")[0]
    assert 'spark="spark01"' in text


def test_lldp_match_is_judged_against_the_cables_far_end(star4: Intent) -> None:
    right = {"interface": "qsfp56-dd-2-1,bridge", "identity": "spark02",
             "interface-name": "enp1s0f0np0"}
    wrong = {**right, "identity": "spark03"}
    lane = next(lane for lane in labels.lanes(star4) if lane.lane == "qsfp56-dd-2-1")
    assert lldp_matches(star4, lane, [right])
    assert not lldp_matches(star4, lane, [wrong])
    assert not lldp_matches(star4, lane, [])
    text = _exposition(star4, {"crs804": _switch([wrong])}, {"crs804": True})
    assert ('fabric_lldp_neighbor_match{cable="spark02:p0--crs804:qsfp56-dd-2-1",'
            'lane="qsfp56-dd-2-1",rail="",side="switch",spark="spark02",twin=""} 0.0') in text
    assert 'fabric_link_downs_total{cable="spark01:p0--crs804:qsfp56-dd-1-1"' in text


def test_cables_are_named_by_link_id_and_their_kind_is_info(star4: Intent) -> None:
    text = _exposition(star4, {}, {})
    assert ('fabric_cable_info{cable="spark04:p0--crs804:qsfp56-dd-4-1",kind="dac-200g",'
            'speed_gbps="200"} 1.0') in text


def test_sysfs_lines_parse_and_unreadable_fields_are_none() -> None:
    got = parse_sysfs("enp1s0f0np0 9000 200000 1 3 2\nenP2p1s0f0np0 9000 - - 1 1\njunk\n")
    assert got["enp1s0f0np0"] == LinkState(9000, 200000, True, 3, 2)
    assert got["enP2p1s0f0np0"] == LinkState(9000, None, False, 1, 1)
    assert set(got) == {"enp1s0f0np0", "enP2p1s0f0np0"}


def test_the_spark_batch_runs_on_a_real_linux_host() -> None:
    """The very script a cycle sends, run here by sh on `lo`: every job comes back."""
    out = subprocess.run(["sh", "-c", spark_script(["lo"])], capture_output=True, text=True,
                         timeout=30, check=False).stdout
    jobs = split_batch(out, 6)
    assert all(j.exit_code is not None for j in jobs), out
    state = parse_sysfs(jobs[-1].text)["lo"]
    assert state.mtu == 65536 and state.speed_mbps is None


def test_drift_from_the_gate_marks_only_the_fields_that_changed(star4: Intent) -> None:
    from fabric.watch.drift import drift

    then = {"sparks": {f"spark02:{t.twin}": {"carrier": True, "speed_mbps": 200000,
                                              "mtu": 1500 if t.rail == 0 else 9000,
                                              "gids": ["x"]}
                       for t in labels.twins(star4, "spark02")},
            "lanes": {"crs804:qsfp56-dd-2-1": {"mtu": 9000, "lldp": ["spark02:p0"]}}}
    right = {"interface": "qsfp56-dd-2-1", "identity": "spark02",
             "interface-name": "enp1s0f0np0"}
    readings = {"spark02": _spark(star4, "spark02"),
                "crs804": SwitchReading("crs804", {"qsfp56-dd-2-1": {"mtu": "9000"}}, {},
                                        [right])}
    got = {(s.labels["twin"], s.labels["field"]): s.value
           for s in drift(star4, then, readings).samples}
    assert got == {("enp1s0f0np0", "carrier"): 0.0, ("enp1s0f0np0", "speed_mbps"): 0.0,
                   ("enp1s0f0np0", "mtu"): 1.0, ("enP2p1s0f0np0", "carrier"): 0.0,
                   ("enP2p1s0f0np0", "speed_mbps"): 0.0, ("enP2p1s0f0np0", "mtu"): 0.0,
                   ("", "mtu"): 0.0, ("", "lldp"): 0.0}
    readings["crs804"] = SwitchReading("crs804", {"qsfp56-dd-2-1": {"mtu": "9000"}}, {}, [])
    lane = [s for s in drift(star4, then, readings).samples if s.labels["field"] == "lldp"]
    assert [s.value for s in lane] == [1.0]


def test_gpu_lines_parse_and_na_is_none() -> None:
    from fabric.watch.optics import gpu_metrics
    from fabric.watch.reads import parse_gpus

    gpus = parse_gpus("0, 43, [N/A]\n1, 51, 38.20\n")
    assert gpus == {"0": (43.0, None), "1": (51.0, 38.2)}
    reading = SparkReading("spark01", {}, CounterSnapshot("spark01", "now"), gpus)
    temp, power = gpu_metrics({"spark01": reading})
    assert [(s.labels["gpu"], s.value) for s in temp.samples] == [("0", 43.0), ("1", 51.0)]
    assert [(s.labels["gpu"], s.value) for s in power.samples] == [("1", 38.2)]


def _heard(twin: str, system: str, port: str) -> LldpNeighbor:
    return LldpNeighbor(local_interface=twin, chassis_name=system, chassis_id=None,
                        port_id=port, port_descr=None, mgmt_ips=())


def test_a_spark_twin_matches_only_when_lldpd_hears_the_cables_far_end_alone() -> None:
    """On the ring there is no switch: each twin's lldpd entries are judged against the
    cable's far end (both far twins of a port name that port); after a re-plug the old entry
    stays until its TTL, so the new far end beside it reads 0 at once."""
    ring = load_intent("ring4", INVENTORY)
    twin = next(t for t in labels.twins(ring, "spark01") if t.twin == "enp1s0f0np0")
    far = next(link for link in ring.links if link.id == twin.link).peer_of("spark01")
    far_twins = [i.netdev for i in ring.interfaces(far.host) if i.link_id == twin.link]
    right = [_heard(twin.twin, far.host, n) for n in far_twins]
    moved = _heard(twin.twin, "spark04", "enp1s0f1np1")
    assert twin_lldp_matches(ring, twin, right)
    assert not twin_lldp_matches(ring, twin, [*right, moved])
    assert not twin_lldp_matches(ring, twin, [])
    reading = replace(_spark(ring, "spark01"), neighbors=(*right, moved))
    text = _exposition(ring, {"spark01": reading}, {"spark01": True})
    assert (f'fabric_lldp_neighbor_match{{cable="{twin.link}",lane="",rail="0",side="spark",'
            f'spark="spark01",twin="enp1s0f0np0"}} 0.0') in text
    assert "fabric_lldp_neighbor_match{" not in _exposition(
        ring, {"spark01": _spark(ring, "spark01")}, {"spark01": True})  # not read: absent


def test_lldpds_json_becomes_neighbours_and_junk_is_not_judged() -> None:
    raw = (Path(__file__).parents[1] / "fixtures/facts/lab_ring4_lldpcli_beacon.json").read_text()
    heard = parse_lldp(raw)
    assert heard and {n.local_interface for n in heard} >= {"enp1s0f0np0"}
    assert parse_lldp("not json") is None
