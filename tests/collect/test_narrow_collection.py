"""`fabric validate --only F` reads only what family F judges (plus the fingerprint's inputs),
and judges F exactly as a run that read everything: on the Sparks' recorded transcripts (the
lab's and a hardware-like ring's, every row's output known) and on the switch through the
emulator."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import pytest

from fabric.collect.gather import collect_facts
from fabric.devices.spark.commands import FINGERPRINT, HOST_COMMANDS, spark_commands
from fabric.devices.spark.facts import spark_twins
from fabric.facts import Facts, SparkFacts, facts_from_json
from fabric.facts_builder import build_spark_facts
from fabric.fingerprint import fingerprint
from fabric.intent.model import Intent
from fabric.report.model import CheckResult
from fabric.target import Target
from fabric.validate import collect_families
from tests.remote.conftest import PASSWORD, USER, Emulator
from validators import FAMILIES, run_checks

from .helpers import FIXTURES, fixture, ring4, sections_of, star4


def _sparks(intent: Intent, transcript: str,
            families: Collection[str] | None) -> dict[str, SparkFacts]:
    """Every Spark of `intent` built from the same recorded transcript, reading only the rows
    `families` need (None: every row)."""
    sections = sections_of(fixture(transcript))
    out: dict[str, SparkFacts] = {}
    for host in intent.sparks:
        twins, used = spark_twins(intent, host.name)
        commands = spark_commands(twins, used, families)
        out[host.name] = build_spark_facts(host.name, twins, sections, commands, used)
    return out


def _judged(results: list[CheckResult]) -> list[tuple[object, ...]]:
    return [(r.check, r.status, r.host, r.link, r.message) for r in results]


CASES = [("star4", "lab_star4_spark01.transcript"), ("ring4", "hw_ring_spark01.transcript")]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("topology", "transcript"), CASES)
def test_a_narrowed_spark_batch_judges_its_family_as_the_full_one(
        topology: str, transcript: str, family: str) -> None:
    intent = star4() if topology == "star4" else ring4()
    recorded = facts_from_json((FIXTURES / "lab_star4.json").read_text())
    base = dataclasses.replace(recorded, topology=intent.name,
                               switch=recorded.switch if intent.switch else None)
    full = dataclasses.replace(base, sparks=_sparks(intent, transcript, None))
    narrow = dataclasses.replace(base, sparks=_sparks(intent, transcript,
                                                      collect_families([family])))
    assert _judged(run_checks(intent, narrow, {family})) == _judged(
        run_checks(intent, full, {family}))
    # whatever is judged, the report's fingerprint is whole
    assert fingerprint(intent, narrow) == fingerprint(intent, full)


def test_a_narrow_batch_leaves_out_what_its_families_do_not_judge() -> None:
    twins, used = spark_twins(star4(), "spark01")
    names = {c.name for c in spark_commands(twins, used, collect_families(
        ["link", "mtu", "addr", "route", "cabling"]))}
    assert {"ip_link", "ip_addr", "ip_route", "lldpcli", "sysfs_gids"} <= names
    assert not names & {"nccl", "cuda_driver", "chronyc_tracking", "iptables_forward",
                        "ibdev2netdev", "hostname"}
    assert not any(n.startswith(("ethtool_i:", "mlnx_qos:")) for n in names)
    every = {c.name for c in spark_commands(twins, used)}
    assert every == {c.name for c in HOST_COMMANDS} | {
        f"{kind}:{t}" for t in twins for kind in ("ethtool", "ethtool_i", "mlnx_qos", "pcie")}


def test_every_row_is_needed_by_a_family_or_the_fingerprint_or_only_facts() -> None:
    """A row no family names is read by `fabric facts` alone (today: the hostname)."""
    twins, used = spark_twins(star4(), "spark01")
    known = set(FAMILIES) | {FINGERPRINT}
    rows = spark_commands(twins, used)
    assert all(c.families <= known for c in rows)
    assert [c.name for c in rows if not c.families] == ["hostname"]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_narrowed_switch_read_judges_its_family_as_the_full_one(
        target: Target, emulator: Emulator, family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import routeros_api

    # lanes that run without an LLDP neighbour here: do not poll the full 2 s for them
    monkeypatch.setattr("fabric.devices.crs804.facts.SWITCH_LLDP_WAIT_S", 0.2)

    pool = routeros_api.RouterOsApiPool("127.0.0.1", username=USER, password=PASSWORD,
                                        port=emulator.port, plaintext_login=True)
    api = pool.get_api()  # two lanes in the fabric bridge, two in none: mixed results
    api.get_resource("/interface/bridge").add(name="bridge")
    for lane in ("qsfp56-dd-1-1", "qsfp56-dd-2-1"):
        api.get_resource("/interface/bridge/port").add(bridge="bridge", interface=lane)
    api.get_resource("/interface/ethernet").set(numbers="qsfp56-dd-3-1", mtu="9000")
    pool.disconnect()
    recorded = facts_from_json((FIXTURES / "lab_star4.json").read_text())

    def with_switch(families: Collection[str] | None) -> Facts:
        got = collect_facts(target, ["crs804"], families=families)
        assert got.errors == {} and got.switch is not None
        return dataclasses.replace(recorded, switch=got.switch)

    full, narrow = with_switch(None), with_switch(collect_families([family]))
    assert _judged(run_checks(target.intent, narrow, {family})) == _judged(
        run_checks(target.intent, full, {family}))
    assert fingerprint(target.intent, narrow) == fingerprint(target.intent, full)
