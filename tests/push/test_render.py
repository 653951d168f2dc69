"""Rendering: golden netplan files and RouterOS scripts (FABRIC_REGEN_GOLDEN=1 refreshes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from fabric.devices.crs804.render import render_routeros
from fabric.devices.spark.render import (
    render_netplan,
    render_sysctl,
    spark_wants,
    sysctl_key,
)
from fabric.intent.build import load_intent

GOLDEN = Path(__file__).parent / "golden"
CASES = [("star4", "spark01"), ("ring4", "spark01"), ("ring4", "spark03"), ("star8", "spark05"),
         ("star16", "spark14")]


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("FABRIC_REGEN_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with FABRIC_REGEN_GOLDEN=1 and review it"
    assert text == path.read_text(), f"{name} differs from its golden file"


@pytest.mark.parametrize(("topology", "host"), CASES)
def test_netplan_golden(topology: str, host: str) -> None:
    _golden(f"{topology}-{host}.netplan.yaml", render_netplan(load_intent(topology), host))


@pytest.mark.parametrize(("topology", "host"), CASES)
def test_sysctl_golden(topology: str, host: str) -> None:
    _golden(f"{topology}-{host}.sysctl.conf", render_sysctl(load_intent(topology), host))


@pytest.mark.parametrize(("topology", "host"), CASES)
def test_sysctl_covers_the_fabric_twins_only(topology: str, host: str) -> None:
    intent = load_intent(topology)
    lines = [ln for ln in render_sysctl(intent, host).splitlines() if not ln.startswith("#")]
    want = [f"net.ipv4.conf.{i.netdev}.{k} = {v}" for i in intent.interfaces(host)
            for k, v in (("arp_ignore", "1"), ("arp_announce", "2"))]
    assert lines == want
    assert not any("enP7s7" in ln for ln in lines)


def test_sysctl_key_of_a_dotted_netdev_uses_slashes() -> None:
    assert sysctl_key("enp1s0f0np0", "arp_ignore") == "net.ipv4.conf.enp1s0f0np0.arp_ignore"
    assert sysctl_key("enp1s0f0np0.100", "arp_ignore") == "net/ipv4/conf/enp1s0f0np0.100/arp_ignore"


@pytest.mark.parametrize(("topology", "version"), [("star4", "7.19.4 (stable)"),
                                                    ("star8", "7.12.1 (stable)"),
                                                    ("star16", "7.19.4 (stable)")])
def test_routeros_golden(topology: str, version: str) -> None:
    _golden(f"{topology}-crs804.rsc", render_routeros(load_intent(topology), version))


def test_ring_has_no_switch_script() -> None:
    assert render_routeros(load_intent("ring4"), "7.19") == ""


@pytest.mark.parametrize(("topology", "host"), CASES)
def test_netplan_is_static_jumbo_no_gateway_no_mgmt(topology: str, host: str) -> None:
    intent = load_intent(topology)
    doc = yaml.safe_load(render_netplan(intent, host))
    eths = doc["network"]["ethernets"]
    assert "enP7s7" not in eths
    assert set(eths) == {i.netdev for i in intent.interfaces(host)}
    for eth in eths.values():
        assert eth["dhcp4"] is False and eth["dhcp6"] is False
        assert eth["mtu"] == 9000
        assert not {"gateway4", "gateway6", "routes"} & set(eth)
        assert len(eth["addresses"]) == 1


def test_star_twins_ping_the_next_spark_on_their_rail() -> None:
    wants = spark_wants(load_intent("star4"), "spark04")
    assert [(w.netdev, w.peer_address) for w in wants] == [
        ("enp1s0f0np0", "10.210.0.1"), ("enP2p1s0f0np0", "10.210.1.1")]


def test_ring_twins_ping_their_cable_peer() -> None:
    wants = spark_wants(load_intent("ring4"), "spark01")
    assert wants[0].peer_address == "10.200.0.2"


def test_the_review_rsc_can_be_pasted_on_a_configured_switch() -> None:
    """Pasted as is, a line must not drop CDP and MNDP from discovery (`set protocol=lldp`
    replaces the list) nor stop at an existing bridge or bridge port (`add` errors when the
    item exists): lldp is appended only when absent, and every `add` is guarded."""
    text = render_routeros(load_intent("star4"), "7.19.4 (stable)")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert "set protocol=lldp" not in lines
    [disc] = [ln for ln in lines if "protocol" in ln]
    assert '[:find [get protocol] "lldp"]' in disc and '([get protocol],"lldp")' in disc
    adds = [ln for ln in lines if ln.startswith("add ")]
    assert not adds, adds
    guarded = [ln for ln in lines if ln.startswith(":if ([:len [find ")]
    assert len(guarded) == 1 + 4  # the bridge and the four cabled lanes
