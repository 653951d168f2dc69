"""Factory-like configuration: every port in `bridge`, the management address on `bridge`;
the README's preparation steps over the API; the `/ip/address` menu."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.host import switch
from fabric.lab.routeros.export import export_terse
from fabric.lab.routeros.platform import LANE_NAMES
from fabric.lab.routeros.state import PREPARED, State, StateFile

from .conftest import MakeLab, connect
from .helpers import CABLED, MGMT_ADDRESS, Lab, RawClient

ALL_PORTS = ["ether1", *LANE_NAMES]


@pytest.fixture
def api(factory: Lab) -> Iterator[Any]:
    pool = connect(factory)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()


def _strip_ids(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in r.items() if k not in ("id", ".id", "port-number")} for r in rows]


def _addresses(api: Any) -> list[dict[str, str]]:
    return _strip_ids([dict(r) for r in api.get_resource("/ip/address").get()])


def test_factory_has_every_port_in_one_offloaded_bridge(factory: Lab, api: Any) -> None:
    [bridge] = api.get_resource("/interface/bridge").get()
    assert (bridge["name"], bridge["comment"]) == ("bridge", "defconf")
    ports = api.get_resource("/interface/bridge/port").get()
    assert [p["interface"] for p in ports] == ALL_PORTS
    for p in ports:
        assert (p["bridge"], p["hw"], p["hw-offload"], p["disabled"]) == (
            "bridge", "true", "true", "false"), p
        assert p["comment"] == "defconf" and p["hw-offload-group"] == "switch1"
    by_name = {p["interface"]: p for p in ports}
    assert by_name["qsfp56-dd-1-1"]["inactive"] == "false"  # cabled, link-ok
    assert by_name["qsfp56-dd-3-1"]["inactive"] == "true"  # no cable: inactive, still hw
    assert by_name["ether1"]["inactive"] == "false"
    slaves = {r["name"] for r in api.get_resource("/interface").get() if r["slave"] == "true"}
    assert slaves == set(ALL_PORTS)


def test_factory_kernel_enslaves_the_lanes_never_ether1(factory: Lab) -> None:
    links = factory.backend.links()
    assert links["bridge"].kind == "bridge"
    assert {n: links[n].master for n in CABLED} == dict.fromkeys(CABLED, "bridge")
    assert links["ether1"].master is None  # the lab's management stays where it is


def test_factory_management_address_sits_on_bridge(api: Any) -> None:
    assert _addresses(api) == [{
        "address": MGMT_ADDRESS, "network": "198.18.3.0", "interface": "bridge",
        "actual-interface": "bridge", "invalid": "false", "dynamic": "false",
        "disabled": "false", "comment": "defconf"}]


def test_prepared_has_the_address_on_ether1_outside_the_bridge(make_lab: MakeLab) -> None:
    prepared = make_lab(config=PREPARED, mgmt_address=MGMT_ADDRESS)
    pool = connect(prepared)
    try:
        api = pool.get_api()
        [address] = _addresses(api)
        assert (address["interface"], address["actual-interface"], address["invalid"]) == (
            "ether1", "ether1", "false")
        ports = [p["interface"] for p in api.get_resource("/interface/bridge/port").get()]
        assert ports == list(LANE_NAMES)
    finally:
        pool.disconnect()
    assert prepared.backend.links()["ether1"].master is None


def _config(state: State) -> object:
    """What an admin configures, without the item ids (which depend on the history)."""
    return (
        [(b.name, b.comment) for b in state.bridges],
        sorted((p.bridge, p.interface, p.hw, p.disabled, p.comment) for p in state.bridge_ports),
        [(a.address, a.network, a.interface, a.disabled, a.comment) for a in state.addresses],
    )


def test_the_admin_steps_over_the_api_make_factory_prepared(
    factory: Lab, make_lab: MakeLab, api: Any
) -> None:
    ports = api.get_resource("/interface/bridge/port")
    [ether1] = ports.get(interface="ether1")
    ports.remove(id=ether1["id"])
    addresses = api.get_resource("/ip/address")
    [mgmt] = addresses.get(interface="bridge")
    addresses.set(id=mgmt["id"], interface="ether1")
    prepared = make_lab(config=PREPARED, mgmt_address=MGMT_ADDRESS)
    done, want = StateFile(factory.state_path).load(), StateFile(prepared.state_path).load()
    assert _config(done) == _config(want)
    assert export_terse(done, now=0).splitlines()[5:] == export_terse(want, now=0).splitlines()[5:]
    assert factory.backend.links()["ether1"].master is None


def test_the_steps_in_the_wrong_order_leave_an_invalid_address(api: Any) -> None:
    addresses = api.get_resource("/ip/address")
    [mgmt] = addresses.get()
    addresses.set(id=mgmt["id"], interface="ether1")  # ether1 is still a bridge port
    [row] = _addresses(api)
    assert (row["interface"], row["actual-interface"], row["invalid"]) == (
        "ether1", "bridge", "true")


def test_without_a_management_address_ip_address_is_empty(make_lab: MakeLab) -> None:
    from fabric.lab.routeros.state import FACTORY

    lab = make_lab(config=FACTORY)
    client = RawClient(lab.port)
    try:
        client.login()
        assert client.talk("/ip/address/print") == [["!empty"], ["!done"]]
    finally:
        client.close()


def test_switch_write_state_defaults_to_factory(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    switch.write_state(path, "crs804", {"qsfp56-dd-1-1": 200}, "admin", "pw")
    state = StateFile(path).load()
    assert [b.name for b in state.bridges] == ["bridge"]
    assert [p.interface for p in state.bridge_ports] == ALL_PORTS
    assert state.addresses == []
    switch.write_state(path, "crs804", {}, "admin", "pw", prepared=True,
                       mgmt_address="198.18.9.251/24")
    state = StateFile(path).load()
    assert [(a.address, a.network, a.interface) for a in state.addresses] == [
        ("198.18.9.251/24", "198.18.9.0", "ether1")]
    assert "ether1" not in [p.interface for p in state.bridge_ports]


def test_factory_export_reads_like_a_defconf(factory: Lab) -> None:
    text = export_terse(StateFile(factory.state_path).load())
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body[0] == "/interface bridge add comment=defconf name=bridge"
    assert body[1] == "/interface bridge port add bridge=bridge comment=defconf interface=ether1"
    assert (f"/ip address add address={MGMT_ADDRESS} comment=defconf interface=bridge "
            "network=198.18.3.0") in body


# --- /ip/address -------------------------------------------------------------------------------


def test_address_add_set_remove(raw: RawClient) -> None:
    raw.login()
    added = raw.talk("/ip/address/add", "=address=198.18.7.1/24", "=interface=qsfp56-dd-1-1",
                     "=comment=lab")
    assert added[0][0] == "!done"
    item = added[0][1].split("=", 2)[2]
    rows = raw.talk("/ip/address/print", "?interface=qsfp56-dd-1-1")
    assert rows[0] == ["!re", f"=.id={item}", "=address=198.18.7.1/24", "=network=198.18.7.0",
                       "=interface=qsfp56-dd-1-1", "=actual-interface=qsfp56-dd-1-1",
                       "=invalid=false", "=dynamic=false", "=disabled=false", "=comment=lab"]
    assert raw.talk("/ip/address/set", f"=.id={item}", "=address=198.18.8.5/16") == [["!done"]]
    assert raw.talk("/ip/address/print", "=.proplist=address,network") == [
        ["!re", "=address=198.18.8.5/16", "=network=198.18.0.0"], ["!done"]]
    assert raw.talk("/ip/address/disable", f"=numbers={item}") == [["!done"]]
    assert raw.talk("/ip/address/print", "=.proplist=disabled") == [
        ["!re", "=disabled=true"], ["!done"]]
    assert raw.talk("/ip/address/remove", f"=.id={item}") == [["!done"]]
    assert raw.talk("/ip/address/print") == [["!empty"], ["!done"]]


@pytest.mark.parametrize(
    ("words", "trap"),
    [
        (("=interface=ether1",),
         ["!trap", "=category=1", "=message=missing value(s) of argument(s) address"]),
        (("=address=198.18.7.1/24",),
         ["!trap", "=category=1", "=message=missing value(s) of argument(s) interface"]),
        (("=address=198.18.7.300/24", "=interface=ether1"),
         ["!trap", "=category=1", "=message=invalid value for argument address"]),
        (("=address=198.18.7.1/24", "=interface=eth9"),
         ["!trap", "=category=1", "=message=input does not match any value of interface"]),
        (("=address=198.18.7.1/24", "=interface=qsfp56-dd-1"),
         ["!trap", "=category=1",
          "=message=ambiguous value of interface, more than one possible value matches input"]),
        (("=address=198.18.7.1/24", "=interface=ether1", "=bogus=1"),
         ["!trap", "=message=unknown parameter"]),
    ],
)
def test_address_errors_are_routeros_texts(
    raw: RawClient, words: tuple[str, ...], trap: list[str]
) -> None:
    raw.login()
    assert raw.talk("/ip/address/add", *words) == [trap, ["!done"]]


def test_address_duplicates_and_missing_items(raw: RawClient) -> None:
    raw.login()
    raw.talk("/ip/address/add", "=address=198.18.7.1/24", "=interface=ether1")
    dup = raw.talk("/ip/address/add", "=address=198.18.7.1/24", "=interface=ether1")
    assert dup == [["!trap", "=message=failure: already have such address"], ["!done"]]
    assert raw.talk("/ip/address/set", "=interface=ether1") == [
        ["!trap", "=message=missing =.id="], ["!done"]]
    assert raw.talk("/ip/address/remove", "=.id=*99") == [
        ["!trap", "=category=0", "=message=no such item"], ["!done"]]


def test_address_menu_with_routeros_api_client(factory: Lab, api: Any) -> None:
    res = api.get_resource("/ip/address")
    res.add(address="198.18.7.1/24", interface="ether1")
    assert sorted(r["interface"] for r in res.get()) == ["bridge", "ether1"]
    [extra] = res.get(address="198.18.7.1/24")
    res.remove(id=extra["id"])
    assert [r["interface"] for r in res.get()] == ["bridge"]
