"""SparkFacts from recorded transcripts: a lab Spark and a hardware-like ring Spark."""

from __future__ import annotations

import dataclasses

from fabric.devices.spark.commands import ABSENT_RC, spark_commands
from fabric.facts import facts_from_json
from fabric.facts_builder import NO_RDMA, Section, build_spark_facts

from .helpers import TWINS, fixture, sections_of

CMDS = spark_commands(TWINS)


def _hw() -> dict[str, Section]:
    return sections_of(fixture("hw_ring_spark01.transcript"))


def test_lab_transcript_gives_the_recorded_facts() -> None:
    facts = build_spark_facts("spark01", TWINS,
                              sections_of(fixture("lab_star4_spark01.transcript")), CMDS,
                              used=TWINS[:2])
    # lldpd's ages (seconds since it learned each neighbour) are read from the same JSON; the
    # recorded facts predate that field
    assert [n.age_s for n in facts.neighbors] == [2.0, 2.0]
    ageless = tuple(dataclasses.replace(n, age_s=None) for n in facts.neighbors)
    assert dataclasses.replace(facts, neighbors=ageless) == facts_from_json(
        fixture("lab_star4.json")).sparks["spark01"]
    assert facts.hostname == "spark01"
    assert facts.netdevs["enp1s0f0np0"].kind == "macvlan"
    assert facts.ethtool["enp1s0f0np0"].speed_mbps == 10000
    assert facts.ethtool["enp1s0f0np0"].driver == "macvlan"
    assert {(n.local_port, n.system_name, n.port_id) for n in facts.neighbors} == {
        ("enp1s0f0np0", "crs804", "qsfp56-dd-1-1"), ("enP2p1s0f0np0", "crs804", "qsfp56-dd-1-1")}
    assert {"mlnx_qos", "ibdev2netdev", "show_gids", "iptables", NO_RDMA} <= set(facts.missing)
    assert facts.rdma == {} and facts.gids == () and facts.forward_policy is None


def test_hardware_like_ring_spark() -> None:
    facts = build_spark_facts("spark01", TWINS, _hw(), CMDS)
    assert facts.hostname == "dgx-spark-1"
    assert facts.rdma == {"rocep1s0f0": "enp1s0f0np0", "rocep1s0f1": "enp1s0f1np1",
                          "roceP2p1s0f0": "enP2p1s0f0np0", "roceP2p1s0f1": "enP2p1s0f1np1"}
    v2 = [(g.rdma, g.index, g.ipv4) for g in facts.gids if g.gid_type == "RoCE v2"]
    assert ("rocep1s0f0", 3, "192.168.200.13") in v2  # from sysfs: show_gids is missing
    assert "show_gids" in facts.missing and NO_RDMA not in facts.missing
    assert facts.ethtool["enp1s0f1np1"].speed_mbps == 100000
    assert facts.ethtool["enp1s0f0np0"].firmware == "28.39.3560"
    assert facts.versions.nic_driver == "mlx5_core"
    assert facts.versions.nic_firmware == "28.39.3560"
    assert (facts.versions.kernel, facts.versions.nccl, facts.versions.cuda_driver) == (
        "6.11.0-1016-nvidia", "2.28.9", "580.95.05")
    assert facts.time is not None and facts.time.source == "chrony" and facts.time.synced
    assert facts.time.stratum == 3
    assert facts.forward_policy == "DROP"
    assert facts.qos["enp1s0f0np0"].trust == "dscp"
    assert facts.qos["enp1s0f0np0"].pfc_enabled == (3,)
    assert [r.dst for r in facts.routes] == ["192.168.100.0/24", "192.168.101.0/24", "default"]
    assert facts.missing == ("show_gids",)


def test_garbage_and_failed_sections_become_notes() -> None:
    facts = build_spark_facts("spark01", TWINS, _hw(), CMDS)
    garbage = [n for n in facts.notes if n.startswith("ethtool_i:enP2p1s0f1np1: unparseable")]
    assert len(garbage) == 1 and "line 1" in garbage[0]
    assert "mlnx_qos:enP2p1s0f1np1: exit 1: Netlink error: Operation not permitted" in facts.notes
    # the rest of that twin is still there
    assert facts.ethtool["enP2p1s0f1np1"].speed_mbps == 200000
    assert facts.ethtool["enP2p1s0f1np1"].driver is None
    assert "enP2p1s0f1np1" not in facts.qos


def test_absent_twin_notes_only_when_the_intent_uses_it() -> None:
    sections = dict(_hw())
    for name in ("ethtool:enp1s0f1np1", "ethtool_i:enp1s0f1np1", "mlnx_qos:enp1s0f1np1"):
        sections[name] = Section(name, "no netdev enp1s0f1np1", ABSENT_RC)
    used = build_spark_facts("s", TWINS, sections, CMDS)
    assert "enp1s0f1np1: no such netdev on the host" in used.notes
    assert "enp1s0f1np1" not in used.ethtool
    spare = build_spark_facts("s", TWINS, sections, CMDS, used=["enp1s0f0np0"])
    assert not any("enp1s0f1np1" in n for n in spare.notes)


def test_time_falls_back_to_timedatectl_and_missing_sections_are_noted() -> None:
    sections = dict(_hw())
    sections["chronyc_tracking"] = Section("chronyc_tracking", "sh: 1: chronyc: not found", 127)
    del sections["iptables_forward"]
    facts = build_spark_facts("s", TWINS, sections, CMDS)
    assert facts.time is not None
    assert (facts.time.source, facts.time.synced, facts.time.offset_s) == (
        "timedatectl", True, None)
    assert "chronyc" in facts.missing
    assert "iptables_forward: not in the transcript" in facts.notes
    assert facts.forward_policy is None


def test_versions_from_dpkg_and_proc() -> None:
    sections = dict(_hw())
    sections["nccl"] = Section("nccl", "2.27.7-1+cuda13.0", 0)
    sections["cuda_driver"] = Section("cuda_driver", (
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build\n"
        "GCC version:  gcc version 13.3.0"), 0)
    facts = build_spark_facts("s", TWINS, sections, CMDS)
    assert (facts.versions.nccl, facts.versions.cuda_driver) == ("2.27.7-1+cuda13.0", "580.95.05")


def test_cuda_toolkit_from_version_json_or_nvcc() -> None:
    sections = dict(_hw())
    sections["cuda_toolkit"] = Section("cuda_toolkit", (
        '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "13.0.2"\n   }\n}'), 0)
    assert build_spark_facts("s", TWINS, sections, CMDS).versions.cuda == "13.0.2"
    sections["cuda_toolkit"] = Section("cuda_toolkit", (
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Cuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler"), 0)
    assert build_spark_facts("s", TWINS, sections, CMDS).versions.cuda == "13.0.88"
    sections["cuda_toolkit"] = Section("cuda_toolkit", "", 127)  # the script: `exit 127`
    facts = build_spark_facts("s", TWINS, sections, CMDS)
    assert facts.versions.cuda is None and "cuda toolkit" in facts.missing


def test_beacon_of_each_neighbour_and_of_the_host() -> None:
    """A ring4 lab Spark's real lldpcli JSON (captured after a collection announced beacon
    38,34,25,AC): every neighbour carries it; the beacon row's echo is the host's own. A
    failed announcement is a note and no beacon."""
    cmds = spark_commands(TWINS, beacon="38,34,25,AC")
    sections = sections_of(fixture("lab_star4_spark01.transcript"))
    sections["lldpcli"] = Section("lldpcli", fixture("lab_ring4_lldpcli_beacon.json"), 0)
    sections["lldp_beacon"] = Section("lldp_beacon", "38,34,25,AC", 0)
    facts = build_spark_facts("spark01", TWINS, sections, cmds)
    assert len(facts.neighbors) == 8 and facts.lldp_beacon == "38,34,25,AC"
    assert {n.beacon for n in facts.neighbors} == {"38,34,25,AC"}
    assert {n.system_name for n in facts.neighbors} == {"spark02", "spark04"}
    sections["lldp_beacon"] = Section("lldp_beacon", "sudo: a password is required", 1)
    failed = build_spark_facts("spark01", TWINS, sections, cmds)
    assert failed.lldp_beacon is None
    assert any(n.startswith("lldp_beacon: exit 1: sudo") for n in failed.notes)
