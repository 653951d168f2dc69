"""The narrow collection `fabric gate` re-reads, and the switch's fresh LLDP: without a lab
(the switch through the emulator, the Sparks through a recorded transcript)."""

from __future__ import annotations

from typing import Any

import pytest

from fabric.collect.gather import collect_facts
from fabric.devices.crs804 import facts as csf
from fabric.devices.crs804.facts import build_neighbors, link_ages
from fabric.fingerprint import fingerprint
from fabric.target import Target

from .test_collect import _fake_sparks


def test_narrow_collection_gives_the_fingerprint_of_the_full_one(
        target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = _fake_sparks(monkeypatch, ["spark01"])
    full = collect_facts(target, ["spark01", "crs804"])
    narrow = collect_facts(target, ["spark01", "crs804"], narrow=True)
    assert full.errors == narrow.errors == {}
    assert fingerprint(target.intent, narrow) == fingerprint(target.intent, full)
    assert len(fingerprint(target.intent, narrow)["lanes"]) == 4
    sent = fakes["spark01"].channels[-1].command
    assert "lldpcli update" in sent and "ethtool -i" not in sent and "nvidia-smi" not in sent
    sw = narrow.switch
    assert sw is not None and set(sw.lanes) == {f"qsfp56-dd-{i}-1" for i in range(1, 5)}


def test_ros_neighbor_ages_and_link_up_times() -> None:
    rows = [{"interface": "qsfp56-dd-2-1,bridge", "identity": "spark03",
             "interface-name": "enp1s0f0np0", "age": "31s"},
            {"interface": "qsfp56-dd-2-1", "identity": "spark02",
             "interface-name": "enp1s0f0np0", "age": "2s"}]
    assert [(n.local_port, n.age_s) for n in build_neighbors(rows)] == [
        ("qsfp56-dd-2-1", 31.0), ("qsfp56-dd-2-1", 2.0)]
    iface = {"qsfp56-dd-2-1": {"last-link-up-time": "2026-12-01 09:29:55"},
             "qsfp56-dd-3-1": {"last-link-up-time": "dec/01/2026 09:00:00"},
             "ether1": {}}
    assert link_ages(iface, {"date": "2026-12-01", "time": "09:30:00"}) == {
        "qsfp56-dd-2-1": 5.0, "qsfp56-dd-3-1": 1800.0}
    assert link_ages(iface, {"date": "dec/01/2026", "time": "09:30:00"})["qsfp56-dd-2-1"] == 5
    assert link_ages(iface, {}) == {}


class _Api:
    """/ip/neighbor answers: a lane without a neighbour until the `ready`th read."""

    def __init__(self, ready: int) -> None:
        self.reads = 0
        self.ready = ready

    def get_resource(self, path: str) -> _Api:
        assert path == "/ip/neighbor"
        return self

    def get(self) -> list[dict[str, Any]]:
        self.reads += 1
        rows = [{"interface": "qsfp56-dd-1-1", "identity": "spark01",
                 "interface-name": "enp1s0f0np0", "age": "3s"}]
        if self.reads >= self.ready:
            rows.append({"interface": "qsfp56-dd-2-1", "identity": "spark02",
                         "interface-name": "enp1s0f0np0", "age": "0s"})
        return rows


def test_switch_lldp_is_polled_until_each_running_lane_hears_a_neighbour(
        target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(csf, "SWITCH_LLDP_WAIT_S", 3.0)  # the emulator fixture shortens it

    api = _Api(ready=3)
    now = time.monotonic()
    first = api.get()
    found = csf._fresh_neighbors(api, target.intent, ["qsfp56-dd-1-1", "qsfp56-dd-2-1"], {},
                                 first, now, now)
    assert api.reads == 3 and {n.local_port for n in found} == {"qsfp56-dd-1-1",
                                                                "qsfp56-dd-2-1"}
    # the lanes changed 2 s ago: spark02's entry (age 0) is heard after that only certainly
    # once the collection itself is a second old; it is waited for, not judged stale
    api = _Api(ready=1)
    now = time.monotonic()
    found = csf._fresh_neighbors(api, target.intent, ["qsfp56-dd-2-1"],
                                 {"qsfp56-dd-1-1": 1000.0, "qsfp56-dd-2-1": 0.5}, api.get(),
                                 now, now)
    assert [n.local_port for n in found if not n.stale] == ["qsfp56-dd-1-1",
                                                           "qsfp56-dd-2-1"], found
    assert api.reads > 1
    silent = _Api(ready=0)
    silent.get = lambda: []  # type: ignore[method-assign]  # no LLDP at all: nothing to wait for
    now = time.monotonic()
    assert csf._fresh_neighbors(silent, target.intent, ["qsfp56-dd-1-1"], {}, [], now,
                                now) == ()
