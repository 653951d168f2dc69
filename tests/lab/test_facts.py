"""`fabric facts` on real lab twins (star4, ring4): complete facts, ONE SSH login per Spark per
run (counted in each lab sshd's own log), the switch through the RouterOS API emulator, and an
unreachable Spark reported as an error while the others complete."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

from fabric.facts import Facts, facts_from_json
from fabric.lab.lifecycle.registry import LabInfo
from tests.conftest import run_cli
from tests.lab.conftest import eventually

pytestmark = pytest.mark.lab
SPARKS = ["spark01", "spark02", "spark03", "spark04"]
P0 = ["enp1s0f0np0", "enP2p1s0f0np0"]
ALL_TWINS = [*P0, "enp1s0f1np1", "enP2p1s0f1np1"]


@pytest.fixture(scope="module")
def star(star4: LabInfo) -> LabInfo:
    """The shared star4 as built."""
    return star4


@pytest.fixture(scope="module")
def ring(ring4: LabInfo) -> LabInfo:
    """The shared ring4 as built."""
    return ring4


def logins(lab: LabInfo) -> dict[str, int]:
    """Accepted SSH logins so far, per host, from the lab sshd's log (-D -e into logs/)."""
    out = {}
    for host in lab.hosts:
        log = lab.dir / "logs" / f"{host}.sshd.log"
        assert log.exists(), f"no sshd log for {host} at {log}"
        out[host] = log.read_text(errors="replace").count("Accepted publickey")
    return out


def run_facts(lab: LabInfo, tmp: Path, capsys: pytest.CaptureFixture[str],
              *extra: str) -> tuple[int, Facts, str, float, dict[str, int]]:
    """`fabric facts --lab` once: exit code, facts, stderr, seconds, logins during the run."""
    before = logins(lab)
    path = tmp / "facts.json"
    t0 = time.monotonic()
    code, _, err = run_cli(["facts", "--lab", lab.name, "--json", str(path), *extra], capsys)
    took = time.monotonic() - t0
    after = logins(lab)
    return code, facts_from_json(path.read_text()), err, took, {
        h: after[h] - before[h] for h in after}


def test_star4_complete_facts_one_login_per_spark(
        star: LabInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, facts, err, took, delta = run_facts(star, tmp_path, capsys)
    print(f"star4 collection: {took:.2f}s, logins per host: {delta}")
    assert code == 0, err
    assert facts.errors == {} and facts.topology == "star4"
    assert sorted(facts.sparks) == SPARKS
    assert delta == {**dict.fromkeys(SPARKS, 1), "crs804": 0}
    for host, s in facts.sparks.items():
        assert s.hostname == host
        assert set(s.ethtool) == set(ALL_TWINS)
        for twin in P0:
            assert s.netdevs[twin].kind == "macvlan" and s.netdevs[twin].carrier
            assert s.ethtool[twin].speed_mbps == 10000 and s.ethtool[twin].link_detected
        assert s.netdevs["enP7s7"].addresses == (f"{star.mgmt[host]}/24",)
        assert s.versions.kernel
        assert "mlnx_qos" in s.missing and "rdma: no RDMA devices" in s.missing
        assert not any("unparseable" in n for n in s.notes), s.notes


def test_star4_neighbors_both_ways(star: LabInfo, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    latest: list[Facts] = []

    def all_seen() -> bool:
        latest[:] = [run_facts(star, tmp_path, capsys)[1]]
        f = latest[0]
        return (f.switch is not None and len(f.switch.neighbors) == 8
                and all(len(s.neighbors) == 2 for s in f.sparks.values()))

    assert eventually(all_seen, timeout=30), latest
    facts = latest[0]
    for n, host in enumerate(SPARKS, start=1):
        lane = f"qsfp56-dd-{n}-1"
        assert {(x.local_port, x.system_name, x.port_id) for x in facts.sparks[host].neighbors} \
            == {(t, "crs804", lane) for t in P0}
    assert facts.switch is not None
    assert {(x.local_port, x.system_name, x.port_id) for x in facts.switch.neighbors} == {
        (f"qsfp56-dd-{n}-1", h, t) for n, h in enumerate(SPARKS, start=1) for t in P0}


def test_star4_switch_facts_from_the_emulator(
        star: LabInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, facts, _, _, _ = run_facts(star, tmp_path, capsys)
    sw = facts.switch
    assert sw is not None
    assert (sw.host, sw.identity, sw.board) == ("crs804", "crs804", "CRS804-4DDQ")
    assert sw.version.startswith("7.")
    assert len(sw.lanes) == 33 and "ether1" in sw.lanes  # a CRS804 lists its RJ45 port too
    for n in range(1, 5):
        lane = sw.lanes[f"qsfp56-dd-{n}-1"]
        assert lane.running and lane.status == "link-ok" and lane.max_l2mtu == 9570
    assert not sw.lanes["qsfp56-dd-1-2"].running
    assert sw.lldp_enabled is True


def test_star4_sshd_stopped_is_exit_3_for_that_spark_only(
        star: LabInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["lab", "fault", "sshd-stop", "spark02", "--name", star.name], capsys)
    assert code == 0, err
    try:
        code, facts, err, _, delta = run_facts(star, tmp_path, capsys)
        assert code == 3
        assert "spark02" in err and "connection refused" in err
        assert list(facts.errors) == ["spark02"]
        assert "connection refused" in facts.errors["spark02"]
        assert sorted(facts.sparks) == ["spark01", "spark03", "spark04"]
        assert facts.switch is not None
        assert delta["spark02"] == 0 and delta["spark01"] == 1
    finally:
        code, _, err = run_cli(["lab", "heal", "--name", star.name], capsys)
        assert code == 0, err
    code, facts, err, _, _ = run_facts(star, tmp_path, capsys)
    assert code == 0, err
    assert sorted(facts.sparks) == SPARKS


def test_ring4_complete_facts_one_login_per_spark(
        ring: LabInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, facts, err, took, delta = run_facts(ring, tmp_path, capsys)
    print(f"ring4 collection: {took:.2f}s, logins per host: {delta}")
    assert code == 0, err
    assert facts.errors == {} and facts.switch is None and facts.topology == "ring4"
    assert sorted(facts.sparks) == SPARKS
    assert delta == dict.fromkeys(SPARKS, 1)
    for host, s in facts.sparks.items():
        assert s.hostname == host
        assert set(s.ethtool) == set(ALL_TWINS)
        for twin in ALL_TWINS:  # a ring cables both ports
            assert s.netdevs[twin].carrier and s.ethtool[twin].link_detected, (host, twin)
        assert not any("no such netdev" in n for n in s.notes), s.notes


def test_hosts_option_limits_the_run(ring: LabInfo, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, facts, err, _, delta = run_facts(ring, tmp_path, capsys, "--hosts", "spark03")
    assert code == 0, err
    assert list(facts.sparks) == ["spark03"]
    assert delta == {**dict.fromkeys(SPARKS, 0), "spark03": 1}


def test_star4_host_key_mismatch_and_rejected_key(
        star: LabInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """-i/-t with our own credentials: a wrong host key and an unknown key refuse the host."""
    lines = {ln.split()[0]: ln.split(None, 1)[1]
             for ln in star.known_hosts.read_text().splitlines() if ln.strip()}
    s1, s2, s3 = (star.mgmt[h] for h in ("spark01", "spark02", "spark03"))
    bad = tmp_path / "known_hosts"
    bad.write_text(f"{s1} {lines[s2]}\n{s3} {lines[s3]}\n")  # spark01: wrong key; spark02: none
    stranger = tmp_path / "id_stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                   check=True)
    for key, value in (("FABRIC_SSH_USER", star.ssh_user), ("FABRIC_KNOWN_HOSTS", str(bad)),
                       ("FABRIC_SSH_KEY", str(star.client_key))):
        monkeypatch.setenv(key, value)
    args = ["facts", "-i", str(star.inventory_dir), "-t", str(star.topology_path), "--hosts",
            "spark01,spark02,spark03", "--json", str(tmp_path / "f.json")]
    code, _, err = run_cli(args, capsys)
    facts = facts_from_json((tmp_path / "f.json").read_text())
    assert code == 3, err
    assert "host key mismatch" in facts.errors["spark01"]
    assert "unknown host key" in facts.errors["spark02"]
    assert list(facts.sparks) == ["spark03"]
    monkeypatch.setenv("FABRIC_SSH_KEY", str(stranger))
    code, _, err = run_cli(args, capsys)
    facts = facts_from_json((tmp_path / "f.json").read_text())
    assert code == 3
    assert facts.errors["spark03"] == f"ssh {s3}:22: authentication failed (key or user rejected)"


def test_spark_session_has_tcp_nodelay(star: LabInfo) -> None:
    """A Spark's exec-only session runs over a socket with TCP_NODELAY: with Nagle on, each
    exec channel's small packets wait for sshd's delayed ACK (about 40 ms per command)."""
    from fabric.lab.lifecycle.registry import lab_target
    from fabric.remote.exec import SPARK_SSH, exec_script
    from fabric.remote.nornir_setup import make_nornir

    nr = make_nornir(lab_target(star.name), ["spark01"], workers=1)
    try:
        conn = nr.inventory.hosts["spark01"].get_connection(SPARK_SSH, nr.config)
        sock = conn.remote_conn_pre.get_transport().sock
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert exec_script(conn, "echo ok", 10) == (0, "ok\n")
    finally:
        nr.close_connections()
