"""The lab's CRS804 as strict as the field: it starts from the factory configuration (every port
in `bridge`, the management address on `bridge`), a PHY change makes the lane train (the Spark
twins lose carrier, then get it back), and the README's preparation steps, over the API and as
one console line over SSH, make it prepared without cutting the lab off."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import routeros_api
from netmiko import ConnectHandler

from fabric.lab.lifecycle.registry import LabInfo
from fabric.lab.routeros.platform import LANE_NAMES
from fabric.lab.routeros.state import PREPARED, State, new_state
from tests.lab.conftest import Labs, eventually, in_host, ip_links

pytestmark = pytest.mark.lab

LAB = "t-sw-factory"
TRAINING_S = 2.0
#: the README's preparation steps, as one console line
PREPARE = ("/interface bridge port remove [find interface=ether1]; "
           "/ip address set [find interface=bridge] interface=ether1")
TWINS = ("enp1s0f0np0", "enP2p1s0f0np0")  # p0 of a star Spark


@pytest.fixture(scope="module")
def lab(labs: Labs) -> Iterator[LabInfo]:
    # factory: the builder's default
    with labs.private("star4", LAB, link_training_s=TRAINING_S) as info:
        yield info


@pytest.fixture
def api(lab: LabInfo) -> Iterator[Any]:
    pool = routeros_api.RouterOsApiPool(lab.mgmt["crs804"], username=lab.routeros_user,
                                        password=lab.routeros_password, port=lab.api_port,
                                        plaintext_login=True)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()


def console(lab: LabInfo, *lines: str) -> list[str]:
    """Netmiko mikrotik_routeros through the lab's sshd: each line's output."""
    conn = ConnectHandler(device_type="mikrotik_routeros", host=lab.mgmt["crs804"],
                          username=lab.routeros_user, password=lab.routeros_password,
                          use_keys=False, ssh_strict=True, system_host_keys=False,
                          alt_host_keys=True, alt_key_file=str(lab.known_hosts),
                          allow_agent=False, conn_timeout=10)
    try:
        return [str(conn.send_command(line)) for line in lines]
    finally:
        conn.disconnect()


def poll(check: Callable[[], bool], timeout: float) -> float:
    """Seconds until `check()` holds, polled; AssertionError past `timeout`."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout}s")
        time.sleep(0.05)
    return time.monotonic() - start


def carrier(lab: LabInfo, host: str) -> dict[str, bool]:
    data = json.loads(in_host(lab, host, "ip", "-j", "link", "show"))
    return {d["ifname"]: "LOWER_UP" in d["flags"] for d in data if d["ifname"] in TWINS}


def status(api: Any, lane: str) -> dict[str, str]:
    rows = api.get_resource("/interface/ethernet").call("monitor", {"numbers": lane, "once": ""})
    return dict(rows[0])


def config(state: State) -> object:
    """What the admin configured, without ids."""
    return ([b.name for b in state.bridges],
            sorted((p.bridge, p.interface, p.hw, p.disabled) for p in state.bridge_ports),
            [(a.address, a.network, a.interface, a.disabled) for a in state.addresses])


def state_of(lab: LabInfo) -> State:
    from fabric.lab.routeros.state import from_json

    return from_json(json.loads((lab.dir / "switch-state.json").read_text()))


def prepared(lab: LabInfo) -> State:
    lanes = {lane.name: lane.cable_gbps for lane in state_of(lab).lanes if lane.cable_gbps}
    return new_state("crs804", lanes, "x", "x", config=PREPARED,
                     mgmt_address=f"{lab.mgmt['crs804']}/24")


def test_factory_switch_has_every_port_in_bridge_and_the_address_on_it(
    lab: LabInfo, api: Any
) -> None:
    [bridge] = api.get_resource("/interface/bridge").get()
    assert bridge["name"] == "bridge"
    ports = api.get_resource("/interface/bridge/port").get()
    assert [p["interface"] for p in ports] == ["ether1", *LANE_NAMES]
    assert {(p["bridge"], p["hw"], p["hw-offload"]) for p in ports} == {("bridge", "true", "true")}
    [address] = api.get_resource("/ip/address").get()
    assert (address["address"], address["interface"], address["actual-interface"]) == (
        f"{lab.mgmt['crs804']}/24", "bridge", "bridge")
    links = ip_links(lab, "crs804")
    assert {n: d.get("master") for n, d in links.items() if n.startswith("qsfp56-dd-")} == {
        f"qsfp56-dd-{n}-1": "bridge" for n in range(1, 5)}
    assert "master" not in links["ether1"]  # the lab's management is not in the fabric bridge
    assert json.dumps(links["ether1"]).count(lab.mgmt["crs804"]) == 1
    # LLDP still sees every Spark (both twins) through the bridge's ports
    want = {(f"qsfp56-dd-{n}-1", f"spark0{n}") for n in range(1, 5)}
    assert eventually(lambda: {(r["interface"].split(",")[0], r["identity"])
                               for r in api.get_resource("/ip/neighbor").get()} == want)


def test_a_phy_change_trains_and_the_spark_twins_lose_carrier(lab: LabInfo, api: Any) -> None:
    lane, spark = "qsfp56-dd-3-1", "spark03"
    eth = api.get_resource("/interface/ethernet")
    assert carrier(lab, spark) == dict.fromkeys(TWINS, True)
    assert status(api, lane)["status"] == "link-ok"
    start = time.monotonic()
    eth.set(id=lane, **{"fec-mode": "fec91"})
    assert status(api, lane)["status"] == "no-link"
    row = eth.get(name=lane)[0]
    assert (row["running"], row["disabled"]) == ("false", "false")
    poll(lambda: carrier(lab, spark) == dict.fromkeys(TWINS, False), timeout=TRAINING_S)
    assert "NO-CARRIER" in in_host(lab, spark, "ip", "link", "show", TWINS[0])
    poll(lambda: status(api, lane)["status"] == "link-ok", timeout=TRAINING_S + 5)
    took = time.monotonic() - start
    assert TRAINING_S * 0.9 <= took <= TRAINING_S + 5, took
    poll(lambda: carrier(lab, spark) == dict.fromkeys(TWINS, True), timeout=5)
    # the same value again is no change: no training, the carrier stays
    eth.set(id=lane, **{"fec-mode": "fec91"})
    assert status(api, lane)["status"] == "link-ok"
    assert carrier(lab, spark) == dict.fromkeys(TWINS, True)
    eth.set(id=lane, **{"fec-mode": "auto"})  # back as it was (trains once more)
    poll(lambda: status(api, lane)["status"] == "link-ok", timeout=TRAINING_S + 5)


def test_a_console_change_trains_too(lab: LabInfo, api: Any) -> None:
    lane, spark = "qsfp56-dd-4-1", "spark04"
    start = time.monotonic()
    [out] = console(lab, f"/interface ethernet set {lane} speed=200G-baseCR4 auto-negotiation=no")
    assert out.strip() == ""
    poll(lambda: carrier(lab, spark) == dict.fromkeys(TWINS, False), timeout=TRAINING_S)
    poll(lambda: status(api, lane)["status"] == "link-ok", timeout=TRAINING_S + 5)
    assert time.monotonic() - start >= TRAINING_S * 0.9
    assert status(api, lane)["rate"] == "200Gbps"
    poll(lambda: carrier(lab, spark) == dict.fromkeys(TWINS, True), timeout=5)


def test_the_preparation_steps_over_the_api_then_as_one_console_line(
    lab: LabInfo, api: Any
) -> None:
    factory = config(state_of(lab))
    ports, addresses = (api.get_resource(p) for p in ("/interface/bridge/port", "/ip/address"))
    for row in ports.get(interface="ether1"):
        ports.remove(id=row["id"])
    for row in addresses.get(interface="bridge"):
        addresses.set(id=row["id"], interface="ether1")
    assert config(state_of(lab)) == config(prepared(lab))
    links = ip_links(lab, "crs804")  # the kernel's management is untouched
    assert "master" not in links["ether1"]
    assert json.dumps(links["ether1"]).count(lab.mgmt["crs804"]) == 1
    # back to the factory configuration, over the API
    ports.add(bridge="bridge", interface="ether1")
    for row in addresses.get(interface="ether1"):
        addresses.set(id=row["id"], interface="bridge")
    assert config(state_of(lab)) == factory
    # and the README's one line, over SSH, as an admin on the management port would
    [out, listing] = console(lab, PREPARE, "/ip address print")
    assert out.strip() == ""
    assert listing.splitlines()[-1].split() == [
        "0", f"{lab.mgmt['crs804']}/24", f"{lab.mgmt['crs804'].rsplit('.', 1)[0]}.0", "ether1"]
    assert config(state_of(lab)) == config(prepared(lab))
    assert api.get_resource("/system/identity").get()[0]["name"] == "crs804"  # still reachable
