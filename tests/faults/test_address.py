"""The addresses the address faults choose, and the route a heal puts back."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface

import pytest

from fabric.lab.faults.address import dead_gateway, route_add_argv, wrong_address
from fabric.lab.faults.records import Route


@pytest.mark.parametrize(("good", "wrong"), [
    ("198.19.0.4/24", "198.19.0.200/24"),
    ("198.19.0.200/24", "198.19.0.201/24"),  # already .200: the one after it
    ("198.19.1.4/24", "198.19.1.200/24"),
    ("10.0.0.9/16", "10.0.0.200/16"),
])
def test_wrong_address_is_host_200_of_the_subnet(good: str, wrong: str) -> None:
    assert wrong_address(IPv4Interface(good)) == IPv4Interface(wrong)


@pytest.mark.parametrize(("addr", "gw"), [
    ("198.19.0.4/24", "198.19.0.254"),
    ("198.19.0.254/24", "198.19.0.253"),  # the host itself: the address before it
    ("198.19.128.1/30", "198.19.128.2"),
])
def test_dead_gateway_is_the_last_host_of_the_subnet(addr: str, gw: str) -> None:
    assert dead_gateway(IPv4Interface(addr)) == IPv4Address(gw)


def test_the_default_route_is_put_back_as_it_was() -> None:
    assert route_add_argv("ns1", Route("10.99.0.1", "mgmt0")) == [
        "ip", "-n", "ns1", "route", "add", "default", "via", "10.99.0.1", "dev", "mgmt0"]
    assert route_add_argv("ns1", Route(None, "mgmt0")) == [
        "ip", "-n", "ns1", "route", "add", "default", "dev", "mgmt0"]
    assert route_add_argv("ns1", Route(None, None)) == [
        "ip", "-n", "ns1", "route", "add", "default"]
