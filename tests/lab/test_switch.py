"""The lab's CRS804: routeros_api through the emulator, Netmiko mikrotik_routeros over SSH."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import routeros_api
from netmiko import ConnectHandler

from fabric.lab.lifecycle.registry import LabInfo
from fabric.lab.routeros.platform import LANE_NAMES
from tests.lab.conftest import ip_links

pytestmark = pytest.mark.lab


@pytest.fixture
def api(star4: LabInfo) -> Iterator[Any]:
    pool = routeros_api.RouterOsApiPool(star4.mgmt["crs804"], username=star4.routeros_user,
                                        password=star4.routeros_password,
                                        port=star4.api_port, plaintext_login=True)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()


def test_api_login_print_and_set_reach_the_kernel(star4: LabInfo, api: Any) -> None:
    assert api.get_resource("/system/identity").get()[0]["name"] == "crs804"
    eth = api.get_resource("/interface/ethernet")
    lane = eth.get(name="qsfp56-dd-3-1")[0]
    eth.set(id=lane["id"], mtu="9000")
    try:
        assert ip_links(star4, "crs804")["qsfp56-dd-3-1"]["mtu"] == 9000
        assert eth.get(name="qsfp56-dd-3-1")[0]["mtu"] == "9000"
    finally:
        eth.set(id=lane["id"], mtu="1500")
    assert ip_links(star4, "crs804")["qsfp56-dd-3-1"]["mtu"] == 1500


def test_api_refuses_a_wrong_password(star4: LabInfo) -> None:
    pool = routeros_api.RouterOsApiPool(star4.mgmt["crs804"], username=star4.routeros_user,
                                        password="wrong", port=star4.api_port,
                                        plaintext_login=True)
    with pytest.raises(routeros_api.exceptions.RouterOsApiCommunicationError):
        pool.get_api()
    pool.disconnect()


@pytest.mark.parametrize("auth", ["key", "password"])
def test_netmiko_mikrotik_identity_and_export(star4: LabInfo, auth: str) -> None:
    creds: dict[str, Any] = ({"use_keys": True, "key_file": str(star4.client_key)}
                             if auth == "key" else {"password": star4.routeros_password,
                                                    "use_keys": False})
    conn = ConnectHandler(device_type="mikrotik_routeros", host=star4.mgmt["crs804"],
                          username=star4.routeros_user, ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(star4.known_hosts), allow_agent=False,
                          conn_timeout=10, **creds)
    try:
        assert "name: crs804" in conn.send_command("/system identity print")
        export = conn.send_command("/export terse")
    finally:
        conn.disconnect()
    assert "/system identity set name=crs804" in export


def test_switch_starts_prepared(star4: LabInfo, api: Any) -> None:
    """star4 starts as the README's preparation steps leave a factory CRS804: every lane in the
    one offloaded `bridge` (enslaved in the kernel too), the management address on ether1."""
    links = ip_links(star4, "crs804")
    lanes = sorted(n for n in links if n.startswith("qsfp56-dd-"))
    assert lanes == ["qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-3-1", "qsfp56-dd-4-1"]
    for lane in lanes:
        assert links[lane]["mtu"] == 1500 and "UP" in links[lane]["flags"]
        assert links[lane]["master"] == "bridge"
    assert [n for n, d in links.items() if d.get("linkinfo", {}).get("info_kind") == "bridge"] \
        == ["bridge"]
    assert "master" not in links["ether1"]
    assert json.dumps(links["ether1"]).count(star4.mgmt["crs804"]) == 1
    [address] = api.get_resource("/ip/address").get()
    assert (address["address"], address["interface"], address["invalid"]) == (
        f"{star4.mgmt['crs804']}/24", "ether1", "false")
    ports = api.get_resource("/interface/bridge/port").get()
    assert [p["interface"] for p in ports] == list(LANE_NAMES)
    assert {(p["bridge"], p["hw"], p["hw-offload"]) for p in ports} == {("bridge", "true", "true")}
