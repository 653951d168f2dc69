"""Every fault changes what the "hardware" reports, and `fabric lab heal` restores it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import routeros_api

from fabric.lab import faults, ns
from fabric.lab.registry import LabInfo
from tests.conftest import run_cli
from tests.lab.conftest import eventually, in_host, ip_links, lldp_neighbors, netmiko_linux

pytestmark = pytest.mark.lab
LANES = ["qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-3-1", "qsfp56-dd-4-1"]


def _api(lab: LabInfo) -> Any:
    return routeros_api.RouterOsApiPool(lab.mgmt["crs804"], username=lab.routeros_user,
                                        password=lab.routeros_password, port=lab.api_port,
                                        plaintext_login=True)


def _monitor(lab: LabInfo, lane: str) -> dict[str, str]:
    pool = _api(lab)
    try:
        eth = pool.get_api().get_resource("/interface/ethernet")
        rows: list[dict[str, str]] = eth.call("monitor", {"numbers": lane, "once": ""})
        return rows[0]
    finally:
        pool.disconnect()


@pytest.fixture(scope="module")
def star(lab_factory: Callable[[str, str], LabInfo]) -> LabInfo:
    """A star4 lab configured the way push would: lanes forced to 200G, MTU 9000, addresses."""
    lab = lab_factory("star4", "t-faults", switch_prepared=True)
    pool = _api(lab)
    try:
        eth = pool.get_api().get_resource("/interface/ethernet")
        for lane in LANES:
            row = eth.get(name=lane)[0]
            eth.set(id=row["id"], mtu="9000", speed="200G-baseCR4",
                    **{"auto-negotiation": "no"})
    finally:
        pool.disconnect()
    return lab


@pytest.fixture
def cli(star: LabInfo, capsys: pytest.CaptureFixture[str]) -> Iterator[
        Callable[..., tuple[int, str]]]:
    def call(*args: str, lab: LabInfo = star) -> tuple[int, str]:
        code, _, err = run_cli(["lab", *args, "--name", lab.name], capsys)
        return code, err

    yield call
    for name in (star.name, "t-ringf"):
        if faults.active_faults(name):
            run_cli(["lab", "heal", "--name", name], capsys)


def test_mtu_fault_shows_in_the_kernel_and_the_api(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "mtu", "qsfp56-dd-1-1")[0] == 0
    assert ip_links(star, "crs804")["qsfp56-dd-1-1"]["mtu"] == 1500
    assert _lane_mtu(star, "qsfp56-dd-1-1") == "1500"
    assert cli("heal")[0] == 0
    assert ip_links(star, "crs804")["qsfp56-dd-1-1"]["mtu"] == 9000
    assert _lane_mtu(star, "qsfp56-dd-1-1") == "9000"


def _lane_mtu(lab: LabInfo, lane: str) -> str:
    pool = _api(lab)
    try:
        return str(pool.get_api().get_resource("/interface/ethernet").get(name=lane)[0]["mtu"])
    finally:
        pool.disconnect()


def test_link_down_drops_carrier_on_both_ends(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "link-down", "spark02:p0")[0] == 0
    assert "NO-CARRIER" in ip_links(star, "crs804")["qsfp56-dd-2-1"]["flags"]
    assert "LOWER_UP" not in ip_links(star, "spark02")["enp1s0f0np0"]["flags"]
    assert _monitor(star, "qsfp56-dd-2-1")["status"] == "no-link"
    assert cli("heal")[0] == 0
    assert "NO-CARRIER" not in ip_links(star, "crs804")["qsfp56-dd-2-1"]["flags"]
    assert "LOWER_UP" in ip_links(star, "spark02")["enp1s0f0np0"]["flags"]
    assert _monitor(star, "qsfp56-dd-2-1")["status"] == "link-ok"


def test_swap_recables_two_switch_ports(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "swap", "crs804:qsfp56-dd-1-1,crs804:qsfp56-dd-2-1")[0] == 0
    assert eventually(lambda: {p for _, _, p in lldp_neighbors(star, "spark01")}
                      == {"qsfp56-dd-2-1"})
    assert eventually(lambda: {h for i, h, _ in lldp_neighbors(star, "crs804")
                               if i == "qsfp56-dd-1-1"} == {"spark02"})
    assert ip_links(star, "crs804")["qsfp56-dd-1-1"]["mtu"] == 9000
    assert cli("heal")[0] == 0
    assert eventually(lambda: {p for _, _, p in lldp_neighbors(star, "spark01")}
                      == {"qsfp56-dd-1-1"})


def test_degrade_shapes_the_cable(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "degrade", "spark03:p0")[0] == 0
    qdisc = json.loads(in_host(star, "spark03", "tc", "-j", "qdisc", "show", "dev", "cx7-p0"))
    assert [q for q in qdisc if q["kind"] == "tbf" and q["options"]["rate"] == 125_000_000]
    assert cli("heal")[0] == 0
    qdisc = json.loads(in_host(star, "spark03", "tc", "-j", "qdisc", "show", "dev", "cx7-p0"))
    assert not [q for q in qdisc if q["kind"] == "tbf"]


def test_autoneg_fault_drops_the_lane_to_100g(star: LabInfo, cli: Any) -> None:
    assert _monitor(star, "qsfp56-dd-4-1")["rate"] == "200Gbps"
    assert cli("fault", "autoneg", "qsfp56-dd-4-1")[0] == 0
    assert _monitor(star, "qsfp56-dd-4-1")["rate"] == "100Gbps"
    assert cli("heal")[0] == 0
    assert _monitor(star, "qsfp56-dd-4-1")["rate"] == "200Gbps"


def test_address_faults_need_a_configured_host(star: LabInfo, cli: Any) -> None:
    code, err = cli("fault", "wrong-addr", "spark04:enp1s0f0np0")
    assert code == 3 and "no IPv4 address" in err
    in_host(star, "spark04", "ip", "addr", "add", "198.19.0.4/24", "dev", "enp1s0f0np0")
    try:
        assert cli("fault", "wrong-addr", "spark04:enp1s0f0np0")[0] == 0
        addrs = [a["local"] for a in ip_links(star, "spark04")["enp1s0f0np0"]["addr_info"]
                 if a["family"] == "inet"]
        assert addrs == ["198.19.0.200"]
        assert cli("fault", "default-route", "spark04:enp1s0f0np0")[0] == 0
        route = json.loads(in_host(star, "spark04", "ip", "-j", "route", "show", "default"))
        assert route and route[0]["dev"] == "enp1s0f0np0"
        assert cli("heal")[0] == 0
        assert json.loads(in_host(star, "spark04", "ip", "-j", "route", "show", "default")) == []
        addrs = [a["local"] for a in ip_links(star, "spark04")["enp1s0f0np0"]["addr_info"]
                 if a["family"] == "inet"]
        assert addrs == ["198.19.0.4"]
    finally:
        in_host(star, "spark04", "ip", "addr", "flush", "dev", "enp1s0f0np0", "scope", "global")


def test_sshd_stop_and_heal_keeps_the_host_key(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "sshd-stop", "spark01")[0] == 0
    assert not ns.port_open(star.mgmt["spark01"], 22)
    assert cli("heal")[0] == 0
    conn = netmiko_linux(star, "spark01")  # strict host key check against known_hosts
    try:
        assert conn.send_command("hostname").strip() == "spark01"
    finally:
        conn.disconnect()


def test_unknown_fault_or_target_is_input_error(cli: Any) -> None:
    assert cli("fault", "melt", "spark01")[0] == 2
    assert cli("fault", "link-down", "spark09:p0")[0] == 2
    assert cli("fault", "swap", "crs804:qsfp56-dd-1-1")[0] == 2


def test_swap_on_a_ring_repairs_cables_between_sparks(
        lab_factory: Callable[[str, str], LabInfo], cli: Any) -> None:
    ring = lab_factory("ring4", "t-ringf", switch_prepared=True)
    mac = ip_links(ring, "spark01")["enp1s0f0np0"]["address"]
    assert cli("fault", "swap", "spark01:p0,spark03:p0", lab=ring)[0] == 0
    assert eventually(lambda: {h for i, h, _ in lldp_neighbors(ring, "spark01")
                               if i == "enp1s0f0np0"} == {"spark04"})
    assert ip_links(ring, "spark01")["enp1s0f0np0"]["address"] == mac
    assert cli("heal", lab=ring)[0] == 0
    assert eventually(lambda: {h for i, h, _ in lldp_neighbors(ring, "spark01")
                               if i == "enp1s0f0np0"} == {"spark02"})
