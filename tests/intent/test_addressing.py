"""Addressing rules: twins in different subnets, rails on a switch, stable when growing."""

from __future__ import annotations

import html
import ipaddress
import json

import pytest

from fabric.intent import addressing
from fabric.intent.build import load_intent
from tests.conftest import run_cli


def planned(name: str) -> dict[tuple[str, str], str]:
    return {(i.host, i.netdev): str(i.address) for i in load_intent(name).interfaces()}


def test_growing_star4_to_star8_keeps_spark01_to_04() -> None:
    star4, star8 = planned("star4"), planned("star8")
    assert len(star4) == 8 and len(star8) == 16
    for key, addr in star4.items():
        assert star8[key] == addr, key


def test_star_rails_put_every_twin_a_in_rail0_and_b_in_rail1() -> None:
    intent = load_intent("star8")
    for itf in intent.interfaces():
        rail = ipaddress.ip_network(["10.210.0.0/24", "10.210.1.0/24"][itf.twin])
        assert itf.address.network == rail
        assert int(itf.address.ip) - int(rail.network_address) == intent.hosts[itf.host].node_id


def test_twins_of_one_host_never_share_a_subnet() -> None:
    for name in ("ring4", "star4", "star8"):
        intent = load_intent(name)
        for host in intent.sparks:
            nets = [i.address.network for i in intent.interfaces(host.name)]
            assert len(nets) == len(set(nets)), (name, host.name)


def test_ring_has_one_subnet_per_twin_per_cable_shared_by_both_ends() -> None:
    intent = load_intent("ring4")
    subnets = [r.subnet for link in intent.links for r in link.rails]
    assert len(subnets) == 8 == len(set(subnets))
    for link in intent.links:
        for rail in link.rails:
            assert rail.a.address is not None and rail.b.address is not None
            assert rail.a.address.network == rail.b.address.network == rail.subnet
            assert rail.a.netdev[-3:] != rail.b.netdev[-3:]  # p0 meets p1 on a ring


def test_ring_cabling_is_p0_to_next_p1() -> None:
    intent = load_intent("ring4")
    for i, link in enumerate(intent.links):
        assert link.a == type(link.a)(f"spark0{i + 1}", "p0")
        assert link.b == type(link.b)(f"spark0{(i + 1) % 4 + 1}", "p1")


def test_pair_index_is_independent_of_node_count() -> None:
    seen = {addressing.pair_index(a, b) for b in range(2, 13) for a in range(1, b)}
    assert len(seen) == 66 and seen == set(range(66))
    assert addressing.pair_index(1, 2) == addressing.pair_index(2, 1) == 0


def test_direct_subnet_refuses_an_exhausted_pool() -> None:
    pool = ipaddress.ip_network("10.0.0.0/23")
    assert addressing.direct_subnet(pool, 24, 1, 2, 0, 1) == ipaddress.ip_network("10.0.1.0/24")
    assert addressing.direct_subnet(pool, 24, 1, 3, 0, 0) is None


def test_assignment_is_deterministic() -> None:
    assert load_intent("ring4").intent_hash == load_intent("ring4").intent_hash
    assert load_intent("star4").intent_hash != load_intent("star8").intent_hash


def test_topo_show_star8_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["topo", "show", "star8", "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    sparks = [h["name"] for h in data["hosts"] if h["role"] == "spark"]
    assert sparks == [f"spark0{i}" for i in range(1, 9)]
    assert [h["name"] for h in data["hosts"] if h["role"] == "switch"] == ["crs804"]
    lanes = [link["switch_lane"] for link in data["links"]]
    assert lanes == [f"qsfp56-dd-{p}-{n}" for p in range(1, 5) for n in (1, 5)]
    assert all(link["speed_gbps"] == 200 for link in data["links"])
    assert data["links"][0]["id"] == "spark01:p0--crs804:qsfp56-dd-1-1"
    assert data["links"][1]["rails"][1]["a"]["address"] == "10.210.1.2/24"
    modes = data["switch"]["port_modes"]
    assert set(modes.values()) == {"2x200G"}


@pytest.mark.parametrize("name", ["ring4", "star8"])
def test_topo_show_svg_labels_links(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["topo", "show", name, "--format", "svg"], capsys)
    assert code == 0, err
    assert out.lstrip().startswith("<?xml") and "</svg>" in out
    out = html.unescape(out)
    intent = load_intent(name)
    for link in intent.links:
        assert f'id="link-{link.id}"' in out
    assert "200G" in out and "UPS-A" in out and "UPS-B" in out
    if name == "star8":
        assert "qsfp56-dd-4 · 2x200G" in out


def test_topo_show_table_lists_twins_and_addresses(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["topo", "show", "ring4"], capsys)
    assert code == 0
    assert "enP2p1s0f1np1" in err and "10.200.13.1/24" in err
