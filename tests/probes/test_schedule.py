"""Bandwidth schedule: no shared port or lane in a round, round counts, localisation of a
slow cable and of a slow cable direction (every test runs both ways at once)."""

from __future__ import annotations

import ipaddress

import pytest

from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.probes.schedule import (
    Crossing,
    Schedule,
    crossing_coverage,
    localise,
    localise_crossings,
    schedule_bandwidth,
)
from tests.conftest import INVENTORY


def _no_sharing(schedule: Schedule) -> None:
    for rnd in schedule.rounds:
        used = [r for t in rnd for r in t.resources]
        assert len(used) == len(set(used)), rnd


@pytest.mark.parametrize("name", ["star4", "star8", "ring4"])
def test_rounds_share_no_nic_or_lane(intents: dict[str, Intent], name: str) -> None:
    schedule = schedule_bandwidth(intents[name], 3.0)
    _no_sharing(schedule)
    assert len(schedule.rounds) == 2
    assert schedule.planned_s == schedule.lower_bound_s == 6.0


def test_star_tests_use_both_sparks_lanes(intents: dict[str, Intent]) -> None:
    test = schedule_bandwidth(intents["star8"], 1.0).tests[0]
    assert set(test.resources) == {"nic:spark01", "nic:spark02", "lane:qsfp56-dd-1-1",
                                   "lane:qsfp56-dd-1-5"}
    # spark01 -> spark02 goes in at spark01's lane and out at spark02's; the way back mirrors
    assert [c.label for c in test.forward] == [
        "spark01→crs804 (crs804:qsfp56-dd-1-1 ingress)",
        "crs804→spark02 (crs804:qsfp56-dd-1-5 egress)"]
    assert [c.label for c in test.reverse] == [
        "spark02→crs804 (crs804:qsfp56-dd-1-5 ingress)",
        "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"]
    assert [leg.twin for leg in test.legs] == [0, 1]
    for leg in test.legs:  # each twin talks inside its own rail
        a = ipaddress.ip_address(leg.client_addr)
        b = ipaddress.ip_address(leg.server_addr)
        assert ipaddress.ip_network(f"{a}/24", strict=False) == ipaddress.ip_network(
            f"{b}/24", strict=False)


@pytest.mark.parametrize("name", ["star4", "star8", "ring4"])
def test_a_single_bad_cable_is_uniquely_identified(intents: dict[str, Intent],
                                                   name: str) -> None:
    intent = intents[name]
    schedule = schedule_bandwidth(intent, 3.0)
    signatures = {}
    for link in intent.links:
        failing = {t.index for t in schedule.tests if link.id in t.links}
        assert localise(schedule, failing) == {link.id}
        signatures[frozenset(failing)] = link.id
    assert len(signatures) == len(intent.links)


@pytest.mark.parametrize("name", ["star4", "star8"])
def test_every_spark_meets_two_partners(intents: dict[str, Intent], name: str) -> None:
    schedule = schedule_bandwidth(intents[name], 3.0)
    for spark in intents[name].sparks:
        partners = {t.server if t.client == spark.name else t.client
                    for t in schedule.tests if spark.name in (t.client, t.server)}
        assert len(partners) == 2


def _ring(tmp_path_factory: pytest.TempPathFactory, n: int) -> Intent:
    path = tmp_path_factory.mktemp("topo") / f"ring{n}.yaml"
    links = "\n".join(
        f"  - {{a: spark0{i + 1}:p0, b: spark0{(i + 1) % n + 1}:p1, speed: 200G, "
        "cable: dac-200g}" for i in range(n))
    path.write_text(f"name: ring{n}\ndescription: test ring\nprofile: cx7-200g\nmtu: 9000\n"
                    "addressing:\n  direct: 10.200.0.0/16\n  direct_prefix: 24\n"
                    f"links:\n{links}\n")
    return load_intent(str(path), INVENTORY)


def _star(tmp_path_factory: pytest.TempPathFactory, n: int) -> Intent:
    path = tmp_path_factory.mktemp("topo") / f"star{n}.yaml"
    links = "\n".join(
        f"  - {{a: spark0{i + 1}:p0, b: crs804:qsfp56-dd-{i + 1}-1, speed: 200G, "
        "cable: dac-200g}" for i in range(n))
    ports = "\n".join(f"    qsfp56-dd-{i + 1}: 1x200G" for i in range(4))
    path.write_text(f"name: star{n}\ndescription: test star\nprofile: cx7-200g\nmtu: 9000\n"
                    "spark_port: p0\nswitch:\n  host: crs804\n  mtu: 9000\n  l2mtu: 9216\n"
                    f"  bridge: bridge\n  ports:\n{ports}\n"
                    "addressing:\n  rails: [10.210.0.0/24, 10.210.1.0/24]\n"
                    f"links:\n{links}\n")
    return load_intent(str(path), INVENTORY)


def test_odd_ring_needs_three_rounds(tmp_path_factory: pytest.TempPathFactory) -> None:
    schedule = schedule_bandwidth(_ring(tmp_path_factory, 3), 2.0)
    _no_sharing(schedule)
    assert len(schedule.rounds) == 3
    assert schedule.lower_bound_s == 4.0 and schedule.planned_s == 6.0


def test_odd_star_three_rounds_and_localises(tmp_path_factory: pytest.TempPathFactory) -> None:
    intent = _star(tmp_path_factory, 3)
    schedule = schedule_bandwidth(intent, 1.0)
    _no_sharing(schedule)
    assert len(schedule.rounds) == 3
    for link in intent.links:
        failing = {t.index for t in schedule.tests if link.id in t.links}
        assert localise(schedule, failing) == {link.id}


def test_two_spark_star_cannot_localise(tmp_path_factory: pytest.TempPathFactory) -> None:
    schedule = schedule_bandwidth(_star(tmp_path_factory, 2), 1.0)
    assert len(schedule.tests) == 1
    assert len(localise(schedule, {0})) == 2


def test_hosts_filter_drops_tests(intents: dict[str, Intent]) -> None:
    schedule = schedule_bandwidth(intents["star4"], 1.0, hosts=["spark01", "spark02", "spark03"])
    _no_sharing(schedule)
    assert {(t.client, t.server) for t in schedule.tests} == {
        ("spark01", "spark02"), ("spark02", "spark03"), ("spark03", "spark01")}


def test_schedule_dict_and_description(intents: dict[str, Intent]) -> None:
    schedule = schedule_bandwidth(intents["star4"], 3.0)
    data = schedule.to_dict()
    assert data["rounds"] == 2 and data["lower_bound_s"] == 6.0 and len(data["plan"]) == 2
    assert "lower bound" in schedule.describe()


def _ways(schedule: Schedule) -> list[tuple[int, bool, tuple[Crossing, ...]]]:
    return [(t.index, rev, t.crossings(rev)) for t in schedule.tests for rev in (False, True)]


@pytest.mark.parametrize("name", ["star4", "star8", "ring4"])
def test_both_ways_cost_no_extra_round(intents: dict[str, Intent], name: str) -> None:
    """Both directions run in the test itself: same rounds, same lower bound."""
    schedule = schedule_bandwidth(intents[name], 3.0)
    assert len(schedule.rounds) == 2 and schedule.planned_s == schedule.lower_bound_s == 6.0
    crossings = {c for _, _, cs in _ways(schedule) for c in cs}
    assert len(crossings) == 2 * len(intents[name].links)  # every cable, both directions
    assert {(c.link, c.src, c.dst) for c in crossings} == {
        (c.link, c.dst, c.src) for c in crossings}


@pytest.mark.parametrize("name", ["star4", "star8"])
def test_star_every_lane_direction_rides_two_tests(intents: dict[str, Intent],
                                                   name: str) -> None:
    schedule = schedule_bandwidth(intents[name], 3.0)
    assert set(crossing_coverage(schedule).values()) == {2}


def test_ring_measures_each_direction_directly(intents: dict[str, Intent]) -> None:
    intent = intents["ring4"]
    schedule = schedule_bandwidth(intent, 3.0)
    for test in schedule.tests:
        [link] = [intent.link(lk) for lk in test.links]
        for rev in (False, True):
            [c] = test.crossings(rev)
            src, dst = test.sender(rev), test.receiver(rev)
            assert (c.link, c.src, c.dst) == (link.id, src, dst)
            assert c.where == f"{src}:{link.end_of(src).port} tx, {dst}:{link.end_of(dst).port} rx"


def _assert_each_crossing_localised(schedule: Schedule) -> None:
    signatures: dict[frozenset[tuple[int, bool]], Crossing] = {}
    for c in {c for _, _, cs in _ways(schedule) for c in cs}:
        failing = {(i, rev) for i, rev, cs in _ways(schedule) if c in cs}
        assert localise_crossings(schedule, failing) == {c}, c.label
        signatures[frozenset(failing)] = c
    assert len(signatures) == len(crossing_coverage(schedule))


@pytest.mark.parametrize("name", ["star4", "star8", "ring4"])
def test_a_single_slow_direction_is_uniquely_identified(intents: dict[str, Intent],
                                                        name: str) -> None:
    _assert_each_crossing_localised(schedule_bandwidth(intents[name], 3.0))


def test_one_way_slow_egress_names_only_that_lane_direction(
        intents: dict[str, Intent]) -> None:
    """spark04->spark01 and spark02->spark01 slow, their other ways fine: egress toward
    spark01, not spark01's cable as a whole and not the senders' lanes."""
    schedule = schedule_bandwidth(intents["star4"], 3.0)
    failing = {(i, rev) for i, rev, cs in _ways(schedule)
               if (cs[-1].dst, cs[0].src) in {("spark01", "spark04"), ("spark01", "spark02")}}
    assert len(failing) == 2
    [blamed] = localise_crossings(schedule, failing)
    assert blamed.label == "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"


def test_odd_star_every_direction_localised(tmp_path_factory: pytest.TempPathFactory) -> None:
    schedule = schedule_bandwidth(_star(tmp_path_factory, 3), 1.0)
    assert set(crossing_coverage(schedule).values()) == {2}
    _assert_each_crossing_localised(schedule)


def test_two_spark_star_one_slow_way_blames_both_its_crossings(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    schedule = schedule_bandwidth(_star(tmp_path_factory, 2), 1.0)
    blamed = localise_crossings(schedule, {(0, False)})
    assert {c.where for c in blamed} == {"crs804:qsfp56-dd-1-1 ingress",
                                         "crs804:qsfp56-dd-2-1 egress"}


def test_schedule_dict_names_each_way(intents: dict[str, Intent]) -> None:
    first = schedule_bandwidth(intents["star4"], 3.0).to_dict()["plan"][0][0]
    assert first["forward"][1] == "crs804→spark02 (crs804:qsfp56-dd-2-1 egress)"
    assert first["reverse"][1] == "crs804→spark01 (crs804:qsfp56-dd-1-1 egress)"


def _capped(intent: Intent, cap: int | None) -> Intent:
    import dataclasses

    return dataclasses.replace(intent, profile=dataclasses.replace(
        intent.profile, bandwidth_tests_per_round=cap))


def test_star16_runs_two_rounds_on_hardware_and_four_under_a_cap_of_four() -> None:
    """The lab's profile caps tests at once (its CPU, not its cables, is the limit): star16's
    two rounds of eight become four of four, each still free of shared resources, and the
    lower bound says so; star8 (four a round) is unchanged."""
    star16 = load_intent("star16")
    free = schedule_bandwidth(star16, 3.0)
    assert [len(r) for r in free.rounds] == [8, 8] and free.lower_bound_s == 6.0
    capped = schedule_bandwidth(_capped(star16, 4), 3.0)
    _no_sharing(capped)
    assert [len(r) for r in capped.rounds] == [4, 4, 4, 4]
    assert capped.planned_s == capped.lower_bound_s == 12.0
    assert {t.index for t in capped.tests} == {t.index for t in free.tests}
    assert "at most 4 tests at once" in capped.scheme
    star8 = schedule_bandwidth(_capped(load_intent("star8"), 4), 3.0)
    assert [len(r) for r in star8.rounds] == [4, 4] and star8.lower_bound_s == 6.0
