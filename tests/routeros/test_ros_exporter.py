"""The menus a RouterOS Prometheus exporter reads by default (mktxp's default collectors), so
one can scrape the lab switch: the same API calls mktxp makes, through routeros-api, against a
factory CRS804 on RouterOS 7. Menus the emulator models nothing for are print-only and empty,
as on a switch with no firewall, queues, pools or netwatch configured."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fabric.lab.routeros.cli import Cli
from fabric.lab.routeros.state import FACTORY

from .conftest import MakeLab, connect
from .helpers import MGMT_ADDRESS, USER, Lab, RawClient


@pytest.fixture
def switch(make_lab: MakeLab) -> Lab:
    return make_lab(config=FACTORY, mgmt_address=MGMT_ADDRESS)


@pytest.fixture
def api(switch: Lab) -> Iterator[Any]:
    pool = connect(switch)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()


def count(api: Any, path: str, **query: str) -> int:
    """mktxp's BaseDSProcessor.count_records: print count-only, queries as `?k=v`."""
    done = api.get_resource(path).call("print", {"count-only": ""}, query).done_message
    return int(done.get("ret", 0))


def test_system_health_rows_are_name_value_type(api: Any) -> None:
    rows = api.get_resource("/system/health").get()
    by_name = {r["name"]: r for r in rows}
    assert all(set(r) == {"id", "name", "value", "type"} for r in rows), rows
    temperatures = [r for r in rows if r["type"] == "C"]
    assert {"cpu-temperature", "switch-temperature"} <= {r["name"] for r in temperatures}
    assert all(20 <= int(r["value"]) <= 90 for r in temperatures)
    fans = [r for r in rows if r["type"] == "RPM"]
    assert [r["name"] for r in fans] == [f"fan{n}-speed" for n in range(1, len(fans) + 1)]
    assert fans and all(int(r["value"]) > 1000 for r in fans)
    assert by_name["fan-state"]["value"] == "ok" and by_name["fan-state"]["type"] == ""
    assert by_name["psu1-state"]["value"] == by_name["psu2-state"]["value"] == "ok"
    volts = [r for r in rows if r["type"] == "V"]
    assert volts and all(10.0 < float(r["value"]) < 14.0 for r in volts)


def test_system_package_lists_routeros_and_switch_marvell(api: Any) -> None:
    rows = api.get_resource("/system/package").get()
    assert [r["name"] for r in rows] == ["routeros", "switch-marvell"]
    assert {r["version"] for r in rows} == {"7.19.4"}
    assert all(r["disabled"] == "false" and r["build-time"] for r in rows)
    enabled = api.get_resource("/system/package").get(disabled="false")  # mktxp's query
    assert len(enabled) == 2


def test_ip_route_has_the_connected_route_of_the_management_address(api: Any) -> None:
    [route] = api.get_resource("/ip/route").get()
    assert (route["dst-address"], route["gateway"], route["routing-table"]) == (
        "198.18.3.0/24", "bridge", "main")
    assert (route["dynamic"], route["active"], route["connect"]) == ("true", "true", "true")
    assert route["local-address"] == "198.18.3.10%bridge"
    # mktxp's route collector counts by flag with `?flag=yes`, as RouterOS matches booleans
    assert count(api, "/ip/route") == 1
    assert [count(api, "/ip/route", **{f: "yes"}) for f in
            ("connect", "dynamic", "static", "bgp", "ospf")] == [1, 1, 0, 0, 0]


def test_an_address_on_a_bridge_port_gives_no_route(switch: Lab, api: Any) -> None:
    api.get_resource("/ip/address").add(address="198.18.9.1/24", interface="qsfp56-dd-1-1")
    assert [r["dst-address"] for r in api.get_resource("/ip/route").get()] == ["198.18.3.0/24"]


@pytest.mark.parametrize("path", ["/ip/firewall/filter", "/ip/firewall/nat",
                                  "/ip/firewall/raw", "/ip/firewall/mangle"])
def test_firewall_tables_are_empty(api: Any, path: str) -> None:
    proplist = "chain,action,bytes,comment,log,out-interface,protocol"  # mktxp's print
    assert api.get_resource(path).call("print", {"stats": "", ".proplist": proplist}) == []


def test_connection_tracking(api: Any) -> None:
    assert count(api, "/ip/firewall/connection/") == 0
    [tracking] = api.get_resource("/ip/firewall/connection/tracking").get()
    assert (tracking["enabled"], tracking["active-ipv4"], tracking["total-entries"]) == (
        "auto", "false", "0")


@pytest.mark.parametrize("path", ["/ip/pool", "/ip/pool/used", "/queue/simple/",
                                  "/queue/tree/", "/tool/netwatch", "/ip/dhcp-server",
                                  "/ip/dhcp-server/lease"])
def test_unconfigured_menus_print_empty(api: Any, path: str) -> None:
    assert api.get_resource(path).get() == []


def test_empty_menus_answer_empty_like_7_18(switch: Lab) -> None:
    raw = RawClient(switch.port)
    raw.login()
    assert raw.talk("/tool/netwatch/print") == [["!empty"], ["!done"]]
    raw.close()


def test_users_and_the_active_sessions(switch: Lab, api: Any) -> None:
    [user] = api.get_resource("/user").get()
    assert (user["name"], user["group"], user["disabled"]) == (USER, "full", "false")
    active = api.get_resource("/user/active/").get()  # mktxp's path, trailing slash and all
    assert [(a["name"], a["via"], a["group"], a["address"]) for a in active] == [
        (USER, "api", "full", "127.0.0.1")]
    assert len(active[0]["when"]) == len("2026-12-01 09:30:00")
    other = connect(switch)
    other.get_api()
    assert len(api.get_resource("/user/active").get()) == 2
    other.disconnect()
    from .helpers import eventually

    eventually(lambda: len(api.get_resource("/user/active").get()) == 1)


def test_the_console_prints_health_as_a_table(switch: Lab) -> None:
    text = Cli(switch.device).execute("/system health print")
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "Columns: NAME, VALUE, TYPE"
    assert any("switch-temperature" in line and line.rstrip().endswith("C") for line in lines)
