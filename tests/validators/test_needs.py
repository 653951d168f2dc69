"""Meta-test: every family declares its needs once, next to its checks, and the collection's
own tables (the Spark batch rows, the switch reads) agree with what the families declare."""

from __future__ import annotations

import importlib

import pytest

from fabric.devices.crs804.facts import QOS_FAMILIES, READS
from fabric.devices.spark.commands import FINGERPRINT, spark_commands
from validators import FAMILIES, NEEDS, PROBES, needs_of
from validators.registry import BANDWIDTH, NCCL, PING
from validators.registry import needs as declare

MODULE_OF = {"route": "addr"}


def test_every_family_declares_its_needs_in_its_module() -> None:
    assert sorted(NEEDS) == sorted(FAMILIES)
    for family, n in NEEDS.items():
        assert n.family == family and n.facts, family
        assert set(n.probes) <= set(PROBES), family
        module = importlib.import_module(f"validators.{MODULE_OF.get(family, family)}")
        assert n in vars(module).values(), family
    assert [n.family for n in needs_of(["nccl", "link"])] == ["link", "nccl"]


def test_the_probes_are_the_families_that_judge_them() -> None:
    """As validate always ran them: mtu pings, bw bandwidth, nccl nccl-tests; counters judges
    a window over the pings and the bandwidth rounds."""
    by = {p: {f for f, n in NEEDS.items() if p in n.probes} for p in PROBES}
    assert by == {PING: {"mtu", "counters"}, BANDWIDTH: {"bw", "counters"}, NCCL: {"nccl"}}
    assert {f for f, n in NEEDS.items() if n.window} == {"counters"}
    assert {f for f, n in NEEDS.items() if n.lldp} == {"cabling"}


def test_a_family_the_spark_batch_reads_for_declares_spark_facts() -> None:
    twins = ["enp1s0f0np0", "enP2p1s0f0np0"]
    tagged = {f for c in spark_commands(twins, twins, None, "A1,0B,C2,3D", twins)
              for f in c.families} - {FINGERPRINT}
    assert tagged == {f for f, n in NEEDS.items() if n.spark}


def test_a_family_the_switch_reads_for_declares_switch_facts() -> None:
    tagged = {f for fams in READS.values() for f in fams} | QOS_FAMILIES
    assert tagged <= {f for f, n in NEEDS.items() if n.switch}


def test_needs_are_declared_once_and_sound() -> None:
    with pytest.raises(ValueError, match="twice"):
        declare("mtu", spark=True)
    with pytest.raises(ValueError, match="must be one of"):
        declare("nope", spark=True)
    with pytest.raises(ValueError, match="unknown probes"):
        declare("link", probes=("iperf9",))
    with pytest.raises(ValueError, match="window needs probes"):
        declare("link", window=True)
