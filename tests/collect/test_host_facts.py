"""The host rows of the Spark batch become HostFacts (PCIe, BIOS, NetworkManager, logind,
memory); a missing tool or a garbled section is recorded, never fatal."""

from __future__ import annotations

from fabric.devices.spark.commands import spark_commands
from fabric.facts_builder import Section, build_spark_facts

from .helpers import TWINS, fixture, sections_of

CMDS = spark_commands(TWINS)


def test_hardware_like_host_state() -> None:
    facts = build_spark_facts("spark01", TWINS, sections_of(fixture("hw_ring_spark01.transcript")),
                              CMDS)
    hs = facts.host_state
    assert set(hs.pcie) == set(TWINS)
    assert (hs.pcie["enP2p1s0f1np1"].width, hs.pcie["enP2p1s0f1np1"].speed_gts) == (4, 32.0)
    assert hs.pcie["enP2p1s0f1np1"].slot == "0002:01:00.1"
    assert (hs.bios_version, hs.bios_date) == ("5.36_0ACUM018", "03/12/2026")
    assert hs.nm_profiles == ()
    assert (hs.remove_ipc, hs.remove_ipc_file) == (
        False, "/etc/systemd/logind.conf.d/40-fabric.conf")
    assert hs.mem_available_kib == 117024512


def test_lab_host_state_no_pci_no_nmcli_default_remove_ipc() -> None:
    facts = build_spark_facts("spark01", TWINS,
                              sections_of(fixture("lab_star4_spark01.transcript")), CMDS)
    hs = facts.host_state
    assert hs.pcie == {} and hs.nm_profiles is None and hs.bios_version is None
    assert {"nmcli", "dmi"} <= set(facts.missing)
    assert (hs.remove_ipc, hs.remove_ipc_file) == (True, None)  # only comments: the default


def test_garbled_and_unusual_sections_are_notes() -> None:
    sections = sections_of(fixture("hw_ring_spark01.transcript"))
    sections["meminfo"] = Section("meminfo", "MemTotal: lots", 0)
    sections["logind"] = Section("logind", "[Login]\nRemoveIPC=maybe\n", 0)
    sections["nmcli"] = Section("nmcli", "Error: NetworkManager is not running.", 1)
    facts = build_spark_facts("spark01", TWINS, sections, CMDS)
    hs = facts.host_state
    assert hs.mem_available_kib is None and hs.nm_profiles is None
    assert hs.remove_ipc is True  # logind ignores a non-boolean: its default stands
    assert any(n.startswith("meminfo: unparseable") for n in facts.notes)
    assert any("RemoveIPC=maybe" in n for n in facts.notes)
    assert any(n.startswith("nmcli: exit 1") for n in facts.notes)
