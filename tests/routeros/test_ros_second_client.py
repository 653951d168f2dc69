"""A second RouterOS API client against the emulator: librouteros, the library Ansible's
community.routeros modules use. The lab's switch must answer it as a CRS804 would, not only
the routeros-api client the toolkit itself uses (DOMAIN.md, "A second RouterOS client")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from librouteros import connect
from librouteros.exceptions import TrapError
from librouteros.query import Key

from .helpers import PASSWORD, USER, Lab


@pytest.fixture
def client(lab: Lab) -> Iterator[Any]:
    api = connect(host="127.0.0.1", username=USER, password=PASSWORD, port=lab.port,
                  timeout=5)
    try:
        yield api
    finally:
        api.close()


def test_login_and_the_board(client: Any) -> None:
    resource = list(client("/system/resource/print"))
    assert len(resource) == 1 and resource[0]["board-name"].startswith("CRS804")
    identity = list(client.path("system", "identity"))
    assert identity[0]["name"]


def test_print_with_a_query_and_typed_values(client: Any) -> None:
    """librouteros turns the words into Python values (ints, bools) and sends `?` queries."""
    ethernet = client.path("interface", "ethernet")
    lanes = list(ethernet)
    assert {"qsfp56-dd-1-1", "qsfp56-dd-2-1", "ether1"} <= {row["name"] for row in lanes}
    name, mtu = Key("name"), Key("mtu")
    picked = list(ethernet.select(name, mtu).where(name == "qsfp56-dd-2-1"))
    assert picked == [{"name": "qsfp56-dd-2-1", "mtu": 1500}]
    assert isinstance(next(r for r in lanes if r["name"] == "ether1")["disabled"], bool)


def test_update_reaches_the_kernel(client: Any, lab: Lab) -> None:
    ethernet = client.path("interface", "ethernet")
    lane = next(r for r in ethernet if r["name"] == "qsfp56-dd-1-1")
    ethernet.update(**{".id": lane[".id"], "mtu": 9000})
    assert lab.backend.links()["qsfp56-dd-1-1"].mtu == 9000
    assert next(r for r in ethernet if r["name"] == "qsfp56-dd-1-1")["mtu"] == 9000


def test_add_and_remove_an_address(client: Any, raw: Any) -> None:
    """Down to an empty menu, which RouterOS 7.18+ answers with `!empty` before `!done`."""
    addresses = client.path("ip", "address")
    new_id = addresses.add(address="198.18.200.1/24", interface="ether1", comment="second")
    assert any(r[".id"] == new_id and r["address"] == "198.18.200.1/24" for r in addresses)
    addresses.remove(new_id)
    assert list(addresses) == []
    raw.login()
    assert raw.talk("/ip/address/print") == [["!empty"], ["!done"]]


def test_errors_are_traps(client: Any, lab: Lab) -> None:
    """A bad request is a `!trap` librouteros raises, and the session stays usable."""
    with pytest.raises(TrapError, match="no such item"):
        client.path("interface", "ethernet").update(**{".id": "*fff", "mtu": 9000})
    assert list(client("/system/resource/print"))
    with pytest.raises(TrapError):
        connect(host="127.0.0.1", username=USER, password="wrong", port=lab.port, timeout=5)
