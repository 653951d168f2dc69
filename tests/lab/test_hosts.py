"""Sparks over SSH (Netmiko, host keys verified) and LLDP matching the cabling on both sides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from netmiko.exceptions import NetmikoTimeoutException

from fabric.intent.build import load_intent
from fabric.lab.registry import LabInfo
from tests.lab.conftest import eventually, in_host, lldp_neighbors, netmiko_linux

pytestmark = pytest.mark.lab


@pytest.fixture(params=["ring4", "star4"])
def lab(request: pytest.FixtureRequest) -> LabInfo:
    info: LabInfo = request.getfixturevalue(request.param)
    return info


def test_every_spark_answers_over_ssh_in_its_own_namespaces(lab: LabInfo) -> None:
    intent = load_intent(lab.topology_path, lab.inventory_dir)
    for spark in intent.sparks:
        conn = netmiko_linux(lab, spark.name)
        try:
            assert conn.send_command("hostname").strip() == spark.name
            links = {d["ifname"]: d for d in json.loads(conn.send_command("ip -j addr show"))}
            twins = [t.netdev for ts in spark.ports.values() for t in ts]
            for twin in twins:
                assert links[twin]["mtu"] == 1500
                assert "UP" in links[twin]["flags"]
                assert not [a for a in links[twin]["addr_info"] if a["family"] == "inet"]
            assert links["enP7s7"]["addr_info"][0]["local"] == lab.mgmt[spark.name]
            assert "Speed: 10000Mb/s" in conn.send_command(f"ethtool {twins[0]}")
            conn.send_command(f"ip link set {twins[0]} mtu 9000")
            assert json.loads(conn.send_command(f"ip -j link show {twins[0]}"))[0]["mtu"] == 9000
            conn.send_command(f"ip link set {twins[0]} mtu 1500")
            marker = f"/etc/netplan/99-{lab.name}-probe.yaml"
            conn.send_command(f"echo probe > {marker}")
            assert conn.send_command(f"cat {marker}").strip() == "probe"
            assert not Path(marker).exists(), "/etc/netplan must be private to the host"
            conn.send_command(f"rm {marker}")
        finally:
            conn.disconnect()


def test_a_wrong_known_hosts_is_refused(ring4: LabInfo, tmp_path: Path) -> None:
    keys = dict(line.split(None, 1) for line in ring4.known_hosts.read_text().splitlines())
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"{ring4.mgmt['spark02']} {keys[ring4.mgmt['spark01']]}\n")
    with pytest.raises(NetmikoTimeoutException, match="does not match"):
        netmiko_linux(ring4, "spark02", wrong)


def test_password_login_is_refused_on_sparks(ring4: LabInfo) -> None:
    import paramiko

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    with pytest.raises(paramiko.AuthenticationException):
        client.connect(ring4.mgmt["spark01"], username="root", password="root",
                       look_for_keys=False, allow_agent=False, timeout=10)
    client.close()


def _expected_neighbors(lab: LabInfo, host: str) -> set[tuple[str, str, str]]:
    """Each twin hears both twins of the peer port; a switch lane hears both twins too."""
    intent = load_intent(lab.topology_path, lab.inventory_dir)
    out: set[tuple[str, str, str]] = set()
    for link in intent.links_of(host):
        mine, peer = link.end_of(host), link.peer_of(host)
        mine_ifs = _ifs(intent, mine.host, mine.port)
        peer_ifs = _ifs(intent, peer.host, peer.port)
        out |= {(m, peer.host, p) for m in mine_ifs for p in peer_ifs}
    return out


def _ifs(intent: object, host: str, port: str) -> list[str]:
    from fabric.intent.model import Intent

    assert isinstance(intent, Intent)
    h = intent.hosts[host]
    return [port] if h.role == "switch" else [t.netdev for t in h.ports[port]]


def test_lldp_neighbors_match_the_cabling_on_both_sides(lab: LabInfo) -> None:
    for host in lab.hosts:
        expected = _expected_neighbors(lab, host)
        assert eventually(lambda h=host, e=expected: lldp_neighbors(lab, h) == e), (
            host, lldp_neighbors(lab, host), expected)


def test_lldp_is_visible_over_ssh_inside_a_spark(star4: LabInfo) -> None:
    conn = netmiko_linux(star4, "spark02")
    try:
        out = json.loads(conn.send_command("lldpcli -f json0 show neighbors"))
    finally:
        conn.disconnect()
    names = {i["chassis"][0]["name"][0]["value"] for i in out["lldp"][0]["interface"]}
    ports = {i["port"][0]["id"][0]["value"] for i in out["lldp"][0]["interface"]}
    assert names == {"crs804"} and ports == {"qsfp56-dd-2-1"}


def test_tools_run_inside_the_hosts(star4: LabInfo) -> None:
    for tool in (["iperf3", "--version"], ["ping", "-V"], ["ethtool", "--version"]):
        in_host(star4, "spark01", *tool)
    assert in_host(star4, "crs804", "hostname").strip() == "crs804"
