"""Menus through the real ``routeros_api`` client against a fake kernel."""

from __future__ import annotations

from typing import Any

from fabric.lab.routeros.backend import Neighbor
from fabric.lab.routeros.state import StateFile

from .helpers import Lab, RawClient, eventually


def _one(resource: Any, **query: str) -> dict[str, str]:
    rows = resource.get(**query)
    assert len(rows) == 1, rows
    return dict(rows[0])


def test_interface_print_lists_32_lanes_and_ether1(api: Any) -> None:
    rows = api.get_resource("/interface").get()
    ports = [r for r in rows if r["type"] == "ether"]
    lanes = [r for r in ports if r["name"].startswith("qsfp56-dd-")]
    assert len(lanes) == 32 and len(ports) == 33
    assert {r["name"] for r in lanes} >= {"qsfp56-dd-1-1", "qsfp56-dd-4-8"}
    running = {r["name"] for r in ports if r["running"] == "true"}
    assert running == {"qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1", "ether1"}
    assert all(r["max-l2mtu"] == "9570" for r in lanes)
    assert {"actual-mtu", "l2mtu", "mac-address", "disabled", "id"} <= set(lanes[0])


def test_ether1_is_an_ethernet_port_the_emulator_never_changes(api: Any, lab: Lab) -> None:
    eth = api.get_resource("/interface/ethernet")
    row = _one(eth, name="ether1")
    assert (row["speed"], row["running"], row["disabled"]) == ("1G-baseT-full", "true", "false")
    mon = eth.call("monitor", {"numbers": "ether1", "once": ""})[0]
    assert (mon["status"], mon["rate"]) == ("link-ok", "1Gbps")
    lab.backend.calls.clear()
    eth.set(id="ether1", mtu="9000", comment="mgmt")
    eth.call("disable", {"numbers": "ether1"})
    assert lab.backend.calls == []  # the lab's management netdev is left alone
    row = _one(eth, name="ether1")
    assert (row["mtu"], row["comment"], row["disabled"], row["running"]) == (
        "9000", "mgmt", "true", "false")
    assert lab.backend.links()["ether1"].admin_up is True


def test_identity_and_resource(api: Any, lab: Lab) -> None:
    api.get_resource("/system/identity").call("set", {"name": "crs804-lab"})
    assert _one(api.get_resource("/system/identity"))["name"] == "crs804-lab"
    assert StateFile(lab.state_path).load().identity == "crs804-lab"
    res = _one(api.get_resource("/system/resource"))
    assert res["board-name"] == "CRS804-4DDQ"
    assert res["version"].startswith("7.19")


def test_set_mtu_by_name_and_by_id_reaches_kernel(api: Any, lab: Lab) -> None:
    eth = api.get_resource("/interface/ethernet")
    eth.set(id="qsfp56-dd-1-1", mtu="9000")
    eth.set(id="*5", mtu="9100")  # *5 is qsfp56-dd-1-5
    assert lab.backend.links()["qsfp56-dd-1-1"].mtu == 9000
    assert lab.backend.links()["qsfp56-dd-1-5"].mtu == 9100
    assert _one(eth, name="qsfp56-dd-1-5")["mtu"] == "9100"


def test_kernel_change_underneath_shows_up(api: Any, lab: Lab) -> None:
    lab.backend.poke("qsfp56-dd-2-1", mtu=1400, carrier=False)
    row = _one(api.get_resource("/interface"), name="qsfp56-dd-2-1")
    assert (row["mtu"], row["running"]) == ("1400", "false")
    mon = api.get_resource("/interface/ethernet").call(
        "monitor", {"numbers": "qsfp56-dd-2-1", "once": ""}
    )
    assert mon[0]["status"] == "no-link"
    lab.backend.poke("qsfp56-dd-2-1", admin_up=False)
    assert _one(api.get_resource("/interface"), name="qsfp56-dd-2-1")["disabled"] == "true"


def test_200g_on_autoneg_comes_up_at_100g_and_is_shaped(api: Any, lab: Lab) -> None:
    eth = api.get_resource("/interface/ethernet")
    mon = eth.call("monitor", {"numbers": "qsfp56-dd-1-1", "once": ""})[0]
    assert (mon["status"], mon["rate"], mon["fec"]) == ("link-ok", "100Gbps", "fec91")
    assert lab.backend.shaping["qsfp56-dd-1-1"] == 5000
    eth.set(id="qsfp56-dd-1-1", speed="200G-baseCR4", **{"auto-negotiation": "no"})
    mon = eth.call("monitor", {"numbers": "qsfp56-dd-1-1", "once": ""})[0]
    assert (mon["status"], mon["rate"], mon["auto-negotiation"]) == (
        "link-ok",
        "200Gbps",
        "disabled",
    )
    assert "qsfp56-dd-1-1" not in lab.backend.shaping


def test_400g_autonegotiates_at_400g(api: Any, lab: Lab) -> None:
    mon = api.get_resource("/interface/ethernet").call(
        "monitor", {"numbers": "qsfp56-dd-2-1", "once": ""}
    )[0]
    assert mon["rate"] == "400Gbps"
    assert "qsfp56-dd-2-1" not in lab.backend.shaping


def test_forced_speed_above_cable_or_wrong_fec_is_no_link(api: Any, lab: Lab) -> None:
    eth = api.get_resource("/interface/ethernet")
    eth.set(id="qsfp56-dd-1-5", speed="400G-baseCR8", **{"auto-negotiation": "no"})
    mon = eth.call("monitor", {"numbers": "qsfp56-dd-1-5", "once": ""})[0]
    assert mon["status"] == "no-link"
    row = _one(eth, name="qsfp56-dd-1-5")
    assert (row["running"], row["disabled"]) == ("false", "false")  # down, yet not disabled
    assert lab.backend.links()["qsfp56-dd-1-5"].admin_up is False  # data plane follows
    eth.set(id="qsfp56-dd-1-5", speed="200G-baseCR4", **{"fec-mode": "fec74"})
    assert eth.call("monitor", {"numbers": "qsfp56-dd-1-5", "once": ""})[0]["status"] == "no-link"
    eth.set(id="qsfp56-dd-1-5", **{"fec-mode": "fec91"})
    mon = eth.call("monitor", {"numbers": "qsfp56-dd-1-5", "once": ""})[0]
    assert (mon["status"], mon["rate"]) == ("link-ok", "200Gbps")
    assert lab.backend.links()["qsfp56-dd-1-5"].admin_up is True


def test_uncabled_lane_is_no_link_without_module(api: Any) -> None:
    mon = api.get_resource("/interface/ethernet").call(
        "monitor", {"numbers": "qsfp56-dd-3-1", "once": ""}
    )[0]
    assert (mon["status"], mon["sfp-module-present"]) == ("no-link", "false")


def test_disable_acts_on_kernel(api: Any, lab: Lab) -> None:
    eth = api.get_resource("/interface/ethernet")
    eth.set(id="qsfp56-dd-2-1", disabled="yes")
    assert lab.backend.links()["qsfp56-dd-2-1"].admin_up is False
    assert _one(eth, name="qsfp56-dd-2-1")["disabled"] == "true"
    eth.call("enable", {"numbers": "qsfp56-dd-2-1"})
    assert lab.backend.links()["qsfp56-dd-2-1"].admin_up is True


def test_bridge_and_ports_follow_into_kernel(raw: RawClient, lab: Lab) -> None:
    raw.login()
    assert raw.talk("/interface/bridge/add", "=name=bridge1") == [["!done", "=ret=*22"]]
    assert raw.talk("/interface/bridge/add", "=name=br2") == [["!done", "=ret=*23"]]
    p1 = raw.talk("/interface/bridge/port/add", "=bridge=bridge1", "=interface=qsfp56-dd-1-1")
    p2 = raw.talk("/interface/bridge/port/add", "=bridge=br2", "=interface=qsfp56-dd-2-1")
    assert p1[0][0] == p2[0][0] == "!done"
    links = lab.backend.links()
    assert links["qsfp56-dd-1-1"].master == "bridge1"
    assert links["qsfp56-dd-2-1"].master == "br2"
    ports = raw.talk("/interface/bridge/port/print", "=.proplist=interface,hw-offload")
    assert ports[:2] == [
        ["!re", "=interface=qsfp56-dd-1-1", "=hw-offload=true"],
        ["!re", "=interface=qsfp56-dd-2-1", "=hw-offload=false"],
    ]
    dup = raw.talk("/interface/bridge/port/add", "=bridge=br2", "=interface=qsfp56-dd-1-1")
    assert dup[0][0] == "!trap"
    port_id = p1[0][1].split("=", 2)[2]
    assert raw.talk("/interface/bridge/port/remove", f"=.id={port_id}") == [["!done"]]
    assert lab.backend.links()["qsfp56-dd-1-1"].master is None
    assert raw.talk("/interface/bridge/remove", "=.id=br2") == [["!done"]]
    assert "br2" not in lab.backend.links()
    assert lab.backend.links()["qsfp56-dd-2-1"].master is None
    state = StateFile(lab.state_path).load()
    assert [b.name for b in state.bridges] == ["bridge1"]
    assert state.bridge_ports == []


def test_discovery_settings(api: Any) -> None:
    res = api.get_resource("/ip/neighbor/discovery-settings")
    res.call("set", {"protocol": "lldp", "lldp-dcbx": "yes"})
    row = _one(res)
    assert (row["protocol"], row["lldp-dcbx"]) == ("lldp", "true")


def test_neighbors_from_backend(api: Any, lab: Lab) -> None:
    """A Neighbor put in the fake kernel's list is heard as one LLDP frame on its lane."""
    lab.backend.neighbor_list = [
        Neighbor("qsfp56-dd-1-1", "spark01", "02:AA:00:00:00:01", "enp1s0f0np0", "Ubuntu 24.04",
                 address="198.18.0.11")
    ]
    rows = eventually(lambda: api.get_resource("/ip/neighbor").get())
    [row] = rows
    assert (row["interface"], row["identity"], row["interface-name"]) == (
        "qsfp56-dd-1-1",
        "spark01",
        "enp1s0f0np0",
    )
    assert (row["mac-address"], row["address"]) == ("02:AA:00:00:00:01", "198.18.0.11")
    assert (row["system-description"], row["discovered-by"]) == ("Ubuntu 24.04", "lldp")


def test_disabling_a_lane_bounces_its_port_group(api: Any, lab: Lab) -> None:
    lab.backend.calls.clear()
    api.get_resource("/interface/ethernet").set(id="qsfp56-dd-1-1", disabled="yes")
    assert ("admin", "qsfp56-dd-1-1", "down") in lab.backend.calls
    bounce = [c for c in lab.backend.calls if c[1] == "qsfp56-dd-1-5"]
    assert bounce == [("admin", "qsfp56-dd-1-5", "down"), ("admin", "qsfp56-dd-1-5", "up")]
    assert not [c for c in lab.backend.calls if c[1] == "qsfp56-dd-2-1"]
