"""Intent minus recorded facts: fresh, configured, partially configured; safety refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fabric.devices.contract import PushRefused
from fabric.devices.crs804.diff import diff_switch
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.spark.diff import check_safe, diff_spark
from fabric.devices.spark.platform import LOGIND_PATH, NETPLAN_PATH, SYSCTL_PATH
from fabric.facts import Facts
from fabric.intent.build import load_intent
from fabric.push.diff import diff_push

from .helpers import lab_intent, recorded

HOSTS = ["crs804", "spark01", "spark02", "spark03", "spark04"]


def test_fresh_lab_needs_every_change() -> None:
    facts, sparks, switch = recorded("fresh")
    changeset = diff_push(lab_intent(), facts, sparks, switch, HOSTS)
    assert changeset.errors == {}
    assert changeset.hosts_with_changes() == [*HOSTS[1:], "crs804"]
    sp = changeset.sparks["spark01"]
    assert sp.commands == (
        "ip link set dev enp1s0f0np0 mtu 9000", "ip addr add 198.19.0.1/24 dev enp1s0f0np0",
        "sysctl -qw net.ipv4.conf.enp1s0f0np0.arp_ignore=1 "
        "net.ipv4.conf.enp1s0f0np0.arp_announce=2",
        "ip link set dev enP2p1s0f0np0 mtu 9000", "ip addr add 198.19.1.1/24 dev enP2p1s0f0np0",
        "sysctl -qw net.ipv4.conf.enP2p1s0f0np0.arp_ignore=1 "
        "net.ipv4.conf.enP2p1s0f0np0.arp_announce=2")
    netplan, sysctl = sp.file(NETPLAN_PATH), sp.file(SYSCTL_PATH)
    assert netplan.old is None and "+        - 198.19.0.1/24" in netplan.diff
    assert sysctl.old is None and sysctl.diff.startswith(
        f"--- /dev/null\n+++ {SYSCTL_PATH} (intent)\n")
    assert "+net.ipv4.conf.enP2p1s0f0np0.arp_announce = 2\n" in sysctl.diff
    assert sp.changes == 9  # netplan, sysctl.d, logind.conf.d and 6 runtime commands
    assert changeset.switch is not None
    calls = [str(c) for c in changeset.switch.calls]
    assert calls[0] == ("/interface/ethernet set qsfp56-dd-1-1 speed: 400G-baseCR8 -> "
                        "200G-baseCR4, auto-negotiation: yes -> no, fec-mode: auto -> fec91, "
                        "l2mtu: 1584 -> 9216, mtu: 1500 -> 9000")
    assert "/interface/bridge add name=bridge" in calls
    assert ("/interface/bridge/port add bridge=bridge interface=qsfp56-dd-4-1 hw=yes"
            in calls)
    assert changeset.changes == 61  # qos: lossy: no lldp-dcbx; 4 logind.conf.d files


def test_configured_lab_needs_nothing() -> None:
    facts, sparks, switch = recorded("configured")
    changeset = diff_push(lab_intent(), facts, sparks, switch, HOSTS)
    assert changeset.changes == 0 and changeset.hosts_with_changes() == []


def test_partially_configured_lab_needs_only_the_drift() -> None:
    facts, sparks, switch = recorded("configured")
    s2 = facts.sparks["spark02"]
    twin = s2.netdevs["enp1s0f0np0"]
    drifted = replace(twin, mtu=1500, admin_up=False, addresses=("198.19.0.99/24",))
    lanes = dict(facts.switch.lanes) if facts.switch else {}
    lanes["qsfp56-dd-3-1"] = replace(lanes["qsfp56-dd-3-1"], auto_negotiation=True)
    assert facts.switch is not None
    facts = replace(facts, sparks={**facts.sparks, "spark02": replace(
        s2, netdevs={**s2.netdevs, "enp1s0f0np0": drifted})},
        switch=replace(facts.switch, lanes=lanes))
    changeset = diff_push(lab_intent(), facts, sparks, switch, HOSTS)
    assert changeset.sparks["spark02"].commands == (
        "ip link set dev enp1s0f0np0 mtu 9000", "ip link set dev enp1s0f0np0 up",
        "ip addr del 198.19.0.99/24 dev enp1s0f0np0", "ip addr add 198.19.0.2/24 dev enp1s0f0np0")
    assert changeset.sparks["spark02"].changed_files == ()
    assert changeset.sparks["spark02"].touched == ("enp1s0f0np0",)
    assert changeset.switch is not None
    assert [str(c) for c in changeset.switch.calls] == [
        "/interface/ethernet set qsfp56-dd-3-1 auto-negotiation: yes -> no"]
    assert changeset.switch.warnings == (
        "changing qsfp56-dd-3-1 restarts every lane of qsfp56-dd-3 "
        "(mode 1x200G); it bounces: spark03 (qsfp56-dd-3-1)",)
    assert changeset.hosts_with_changes() == ["spark02", "crs804"]


def test_unreachable_host_is_reported_others_planned() -> None:
    facts, sparks, switch = recorded("fresh")
    facts = replace(facts, errors={"spark03": "ssh: connection refused"},
                    sparks={h: f for h, f in facts.sparks.items() if h != "spark03"})
    changeset = diff_push(lab_intent(), facts, sparks, switch, HOSTS)
    assert changeset.errors == {"spark03": "ssh: connection refused"}
    assert set(changeset.sparks) == {"spark01", "spark02", "spark04"}


def test_refuses_the_management_interface() -> None:
    with pytest.raises(PushRefused, match="enP7s7: it is the management interface"):
        check_safe("spark01", ["enP7s7"], "enP7s7", None)


def test_refuses_the_interface_the_session_rides_on() -> None:
    facts, sparks, _ = recorded("fresh")
    snap = sparks["spark01"]
    # pretend this SSH session arrived on twin A (its address made the session's address)
    ip_addr = [dict(x) for x in snap.ip_addr]
    for link in ip_addr:
        if link["ifname"] == "enp1s0f0np0":
            link["addr_info"] = [{"family": "inet", "local": "198.18.1.1", "prefixlen": 24}]
        elif link["ifname"] == "enP7s7":
            link["addr_info"] = []
    snap = replace(snap, ip_addr=ip_addr)
    assert snap.connected_netdev() == "enp1s0f0np0"
    with pytest.raises(PushRefused, match="SSH session is connected through it"):
        diff_spark(lab_intent(), facts.sparks["spark01"], snap)


def test_connected_through_enp7s7_is_fine_when_untouched() -> None:
    facts, sparks, _ = recorded("fresh")
    assert sparks["spark01"].connected_netdev() == "enP7s7"
    assert diff_spark(lab_intent(), facts.sparks["spark01"], sparks["spark01"]).changes == 9


def test_lossy_leaves_switch_qos_and_dcbx_alone() -> None:
    """qos: lossy (the default): no QoS and no lldp-dcbx on any RouterOS version."""
    facts, _, switch = recorded("fresh")
    assert facts.switch is not None
    for version in ("7.12.1 (stable)", "7.19.4 (stable)", "7.23 (stable)"):
        changeset = diff_switch(lab_intent(), replace(facts.switch, version=version), switch)
        assert not any("lldp-dcbx" in str(c) or "/switch" in c.path for c in changeset.calls)
        assert changeset.refused is None
        assert "qos: lossy: the switch's QoS and LLDP DCBX are left as they are" in changeset.notes


def test_lldp_is_added_to_the_protocols_there() -> None:
    facts, _, switch = recorded("configured")
    assert facts.switch is not None
    rows = dict(switch.rows)
    rows["/ip/neighbor/discovery-settings"] = [{"protocol": "cdp,mndp", "lldp-dcbx": "true"}]
    changeset = diff_switch(lab_intent(), facts.switch, replace(switch, rows=rows))
    assert [str(c) for c in changeset.calls] == [
        "/ip/neighbor/discovery-settings set protocol: cdp,mndp -> cdp,mndp,lldp"]


def test_breakout_warning_once_per_port_group_listing_its_nodes() -> None:
    intent = load_intent("star8")
    facts, _, switch = recorded("fresh")
    assert facts.switch is not None
    changeset = diff_switch(intent, facts.switch, switch)
    assert len(changeset.warnings) == 4  # four 2x200G groups, two Sparks each: one warning each
    assert changeset.warnings[0] == (
        "changing qsfp56-dd-1-1, qsfp56-dd-1-5 restarts every lane of qsfp56-dd-1 "
        "(mode 2x200G); it bounces: spark01 (qsfp56-dd-1-1), spark02 (qsfp56-dd-1-5)")
    for n, warning in enumerate(changeset.warnings, start=1):
        assert warning.count(f"restarts every lane of qsfp56-dd-{n} ") == 1


def test_unused_lanes_are_left_alone() -> None:
    facts, sparks, switch = recorded("fresh")
    changeset = diff_push(lab_intent(), facts, sparks, switch, HOSTS)
    assert changeset.switch is not None
    targets = {c.target for c in changeset.switch.calls if c.path == "/interface/ethernet"}
    assert targets == {"qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-3-1", "qsfp56-dd-4-1"}


def test_no_facts_no_plan() -> None:
    changeset = diff_push(lab_intent(), Facts(collected="", topology="star4"), {},
                     SwitchSnapshot("crs804", {}), ["spark01", "crs804"])
    assert changeset.errors == {"spark01": "no facts", "crs804": "no switch facts"}


def test_arp_policy_covers_the_twin_and_the_netdev_it_rides_on() -> None:
    """Twins sharing a cable must not answer ARP for each other (ARP flux): both twins and the
    netdev they are stacked on (the lab's hidden cable end) get arp_ignore=1, arp_announce=2."""
    facts, sparks, _ = recorded("configured")
    snap = sparks["spark01"]
    arp = {**snap.arp, "cx7-p0": {"arp_ignore": "0", "arp_announce": "0"}}
    links = [{"ifname": "enp1s0f0np0", "link": "cx7-p0"}, {"ifname": "enP2p1s0f0np0",
                                                          "link": "cx7-p0"}]
    changeset = diff_spark(lab_intent(), facts.sparks["spark01"],
                      replace(snap, arp=arp, ip_link=links))
    assert changeset.commands == ("sysctl -qw net.ipv4.conf.cx7-p0.arp_ignore=1 "
                             "net.ipv4.conf.cx7-p0.arp_announce=2",)
    assert changeset.touched == ("cx7-p0", "enp1s0f0np0")


def test_sysctl_file_alone_when_runtime_is_right() -> None:
    """A Spark configured before sysctl.d was managed: only the file is planned; the runtime
    sysctls already hold, so no command runs."""
    facts, sparks, _ = recorded("configured")
    kept = sparks["spark01"].files
    snap = replace(sparks["spark01"], files={LOGIND_PATH: kept[LOGIND_PATH]})
    changeset = diff_spark(lab_intent(), facts.sparks["spark01"], snap)
    assert changeset.commands == () and changeset.touched == ()
    assert [f.path for f in changeset.changed_files] == [SYSCTL_PATH]
    assert changeset.changes == 1


def test_edited_sysctl_file_is_diffed_against_what_is_there() -> None:
    facts, sparks, _ = recorded("configured")
    snap = sparks["spark01"]
    edited = (snap.file(SYSCTL_PATH) or "").replace("arp_announce = 2", "arp_announce = 0", 1)
    changeset = diff_spark(lab_intent(), facts.sparks["spark01"],
                      replace(snap, files={SYSCTL_PATH: edited}))
    diff = changeset.file(SYSCTL_PATH).diff
    assert f"--- {SYSCTL_PATH} (on spark01)" in diff
    assert "-net.ipv4.conf.enp1s0f0np0.arp_announce = 0" in diff
    assert "+net.ipv4.conf.enp1s0f0np0.arp_announce = 2" in diff
