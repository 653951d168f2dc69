"""Sparks over SSH (Netmiko, host keys verified) and LLDP matching the cabling on both sides."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest
from netmiko.exceptions import NetmikoTimeoutException

from fabric.intent.build import load_intent
from fabric.intent.model import Host
from fabric.lab import names
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import eventually, in_host, ip_links, lldp_neighbors, netmiko_linux

pytestmark = pytest.mark.lab


@pytest.fixture(params=["ring4", "star4"])
def lab(request: pytest.FixtureRequest) -> LabInfo:
    info: LabInfo = request.getfixturevalue(request.param)
    return info


def test_every_spark_answers_over_ssh_in_its_own_namespaces(lab: LabInfo) -> None:
    intent = load_intent(lab.topology_path, lab.inventory_dir)
    with ThreadPoolExecutor(max_workers=len(intent.sparks)) as pool:  # one session per Spark
        for done in [pool.submit(_answers_over_ssh, lab, spark) for spark in intent.sparks]:
            done.result()


def _answers_over_ssh(lab: LabInfo, spark: Host) -> None:
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
        # the login is a normal user: changes need sudo, as on DGX OS
        assert conn.send_command("id -un").strip() == lab.ssh_user != "root"
        assert "Operation not permitted" in conn.send_command(
            f"ip link set {twins[0]} mtu 9000")
        conn.send_command(f"sudo -n ip link set {twins[0]} mtu 9000")
        assert json.loads(conn.send_command(f"ip -j link show {twins[0]}"))[0]["mtu"] == 9000
        conn.send_command(f"sudo -n ip link set {twins[0]} mtu 1500")
        marker = f"/etc/netplan/99-{lab.name}-probe.yaml"
        assert "Permission denied" in conn.send_command(f"echo probe > {marker}")
        conn.send_command(f"echo probe | sudo -n tee {marker}")
        assert conn.send_command(f"cat {marker}").strip() == "probe"
        assert not Path(marker).exists(), "/etc/netplan must be private to the host"
        conn.send_command(f"sudo -n rm {marker}")
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
    for user in ("root", ring4.ssh_user):
        with pytest.raises(paramiko.AuthenticationException):
            client.connect(ring4.mgmt["spark01"], username=user, password="root",
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


def _neighbors_are(lab: LabInfo, host: str, expected: set[tuple[str, str, str]]) -> bool:
    return lldp_neighbors(lab, host) == expected


def test_lldp_neighbors_match_the_cabling_on_both_sides(lab: LabInfo) -> None:
    for host in lab.hosts:
        expected = _expected_neighbors(lab, host)
        assert eventually(partial(_neighbors_are, lab, host, expected)), (
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


#: Run inside a lab host: broadcast COUNT ARP requests for TIP out of DEV, print every reply's
#: sender MAC and every source MAC heard, until WANT has answered them all (or 5 s passed).
ARP_PROBE = r"""
import json, socket, struct, sys, time
dev, sip, tip, want, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((dev, 0))
mac = s.getsockname()[4]
req = (b"\xff" * 6 + mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac
       + socket.inet_aton(sip) + b"\0" * 6 + socket.inet_aton(tip))
for _ in range(count):
    s.send(req)
replies, sources, answered, deadline = [], set(), 0, time.monotonic() + 5
while answered < count and time.monotonic() < deadline:
    s.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        frame, addr = s.recvfrom(2048)
    except TimeoutError:
        break
    if addr[2] == socket.PACKET_OUTGOING:
        continue
    sources.add(frame[6:12].hex(":"))
    if frame[12:14] == b"\x08\x06" and frame[20:22] == b"\x00\x02" and frame[28:32] == (
            socket.inet_aton(tip)):
        replies.append(frame[22:28].hex(":"))
        answered += replies[-1] == want
print(json.dumps({"replies": replies, "sources": sorted(sources)}))
"""


def _sysctls(lab: LabInfo, host: str, *keys: str) -> dict[str, str]:
    out = in_host(lab, host, "sysctl", *keys)
    return {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in
                                                  out.splitlines())}


def _has_link_local(lab: LabInfo, host: str, dev: str) -> bool:
    return any(a["family"] == "inet6" and a["scope"] == "link"
               for a in ip_links(lab, host)[dev]["addr_info"])


def test_hidden_cable_ends_are_silent_and_twins_keep_kernel_defaults(lab: LabInfo) -> None:
    intent = load_intent(lab.topology_path, lab.inventory_dir)
    for spark in intent.sparks:
        links = ip_links(lab, spark.name)
        cabled = {lk.end_of(spark.name).port for lk in intent.links_of(spark.name)}
        for port, twins in spark.ports.items():
            lower = names.lower(port)
            assert links[lower]["addr_info"] == [], (spark.name, lower)  # no IPv6 link-local
            assert _sysctls(lab, spark.name, f"net.ipv4.conf.{lower}.arp_ignore",
                            f"net.ipv6.conf.{lower}.disable_ipv6") == {
                f"net.ipv4.conf.{lower}.arp_ignore": "8",
                f"net.ipv6.conf.{lower}.disable_ipv6": "1"}
            defaults = _sysctls(lab, spark.name, "net.ipv4.conf.default.arp_ignore",
                                "net.ipv4.conf.default.arp_announce")
            for t in twins:
                assert _sysctls(lab, spark.name, f"net.ipv4.conf.{t.netdev}.arp_ignore",
                                f"net.ipv4.conf.{t.netdev}.arp_announce") == {
                    k.replace("default", t.netdev): v for k, v in defaults.items()}
                if port in cabled:  # a twin with carrier gets its link-local, as on a Spark
                    assert eventually(partial(_has_link_local, lab, spark.name, t.netdev))


def test_only_twins_answer_arp_never_the_hidden_cable_end(ring4: LabInfo) -> None:
    """A broadcast ARP request for a twin's address, sent by the peer across the cable, is
    answered by twins only: at kernel defaults maybe by both twins of the port (as two PFs
    do), with push's arp_ignore=1 by the owner alone; the hidden end never answers."""
    intent = load_intent(ring4.topology_path, ring4.inventory_dir)
    link = next(lk for lk in intent.links_of("spark01") if lk.end_of("spark01").port == "p0")
    peer = link.peer_of("spark01")
    owner, other = (t.netdev for t in intent.hosts["spark01"].ports["p0"])
    sender = intent.hosts[peer.host].ports[peer.port][0].netdev
    links = ip_links(ring4, "spark01")
    lower_mac = links[names.lower("p0")]["address"]
    owner_mac, other_mac = links[owner]["address"], links[other]["address"]
    keys = [f"net.ipv4.conf.{t}.arp_ignore" for t in (owner, other)]
    before = _sysctls(ring4, "spark01", *keys)

    def probe() -> tuple[list[str], list[str]]:
        out = json.loads(in_host(ring4, peer.host, sys.executable, "-c", ARP_PROBE, sender,
                                 "198.19.127.2", "198.19.127.1", owner_mac, "3"))
        return out["replies"], out["sources"]

    in_host(ring4, "spark01", "ip", "addr", "add", "198.19.127.1/24", "dev", owner)
    try:
        replies, sources = probe()
        assert replies.count(owner_mac) == 3, replies
        assert set(replies) <= {owner_mac, other_mac}, (replies, lower_mac)
        assert lower_mac not in sources
        in_host(ring4, "spark01", "sysctl", "-q", "-w", *(f"{k}=1" for k in keys))
        replies, sources = probe()
        assert replies == [owner_mac] * 3, (replies, lower_mac)
        assert lower_mac not in sources
    finally:
        in_host(ring4, "spark01", "sysctl", "-q", "-w", *(f"{k}={v}" for k, v in before.items()))
        in_host(ring4, "spark01", "ip", "addr", "flush", "dev", owner)
        for t in (owner, other):
            in_host(ring4, "spark01", "ip", "neigh", "flush", "dev", t)
