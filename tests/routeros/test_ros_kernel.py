"""The emulator against the REAL kernel, in a throw-away network namespace (needs root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import routeros_api

from fabric.lab.routeros.device import Device
from fabric.lab.routeros.kernel import KernelBackend
from fabric.lab.routeros.server import ApiServer
from fabric.lab.routeros.state import FACTORY, StateFile, write_initial_state

#: A real network namespace: root, like the lab (`make test-fast` leaves it out).
pytestmark = pytest.mark.lab

LANES = {"qsfp56-dd-1-1": 200, "qsfp56-dd-2-1": 400}
PEERS = {"qsfp56-dd-1-1": "peer-1-1", "qsfp56-dd-2-1": "peer-2-1"}


def ns_run(ns: str, *argv: str) -> str:
    return subprocess.run(
        ["ip", "netns", "exec", ns, *argv], check=True, capture_output=True, text=True
    ).stdout


def link(ns: str, name: str) -> dict[str, Any]:
    info: dict[str, Any] = json.loads(ns_run(ns, "ip", "-j", "link", "show", "dev", name))[0]
    return info


@pytest.fixture
def netns() -> Iterator[str]:
    ns = f"fabtest-ros-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:  # no IPv6: its own frames (DAD, MLD, router solicitations) would move the counters
        ns_run(ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
               "net.ipv6.conf.default.disable_ipv6=1")
        for lane, peer in PEERS.items():
            ns_run(ns, "ip", "link", "add", lane, "type", "veth", "peer", "name", peer)
            ns_run(ns, "ip", "link", "set", lane, "up")
            ns_run(ns, "ip", "link", "set", peer, "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", LANES, "admin", "pw")
    return path


@pytest.fixture
def api(netns: str, state_path: Path) -> Iterator[Any]:
    device = Device(StateFile(state_path), KernelBackend(netns), line_rate_mbit=10000,
                    training_s=0.0)
    device.reconcile()
    server = ApiServer(("127.0.0.1", 0), device)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    pool = routeros_api.RouterOsApiPool(
        "127.0.0.1", username="admin", password="pw", port=server.server_address[1],
        plaintext_login=True,
    )  # fmt: skip
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()
        server.shutdown()
        server.server_close()


def _monitor(api: Any, lane: str) -> dict[str, str]:
    rows = api.get_resource("/interface/ethernet").call("monitor", {"numbers": lane, "once": ""})
    return dict(rows[0])


def _row(api: Any, lane: str) -> dict[str, str]:
    return dict(api.get_resource("/interface").get(name=lane)[0])


def _tbf(ns: str, dev: str) -> list[dict[str, Any]]:
    qdiscs = json.loads(ns_run(ns, "tc", "-j", "qdisc", "show", "dev", dev))
    return [q for q in qdiscs if q.get("kind") == "tbf"]


def test_set_mtu_changes_kernel_mtu(api: Any, netns: str) -> None:
    api.get_resource("/interface/ethernet").set(id="qsfp56-dd-2-1", mtu="9000")
    assert link(netns, "qsfp56-dd-2-1")["mtu"] == 9000
    ns_run(netns, "ip", "link", "set", "qsfp56-dd-2-1", "mtu", "1600")
    assert _row(api, "qsfp56-dd-2-1")["mtu"] == "1600"


def test_link_down_underneath_shows_in_print_and_monitor(api: Any, netns: str) -> None:
    assert _row(api, "qsfp56-dd-2-1")["running"] == "true"
    assert _monitor(api, "qsfp56-dd-2-1")["status"] == "link-ok"
    ns_run(netns, "ip", "link", "set", "peer-2-1", "down")  # the far end: carrier lost
    row = _row(api, "qsfp56-dd-2-1")
    assert (row["running"], row["disabled"]) == ("false", "false")
    assert _monitor(api, "qsfp56-dd-2-1")["status"] == "no-link"
    ns_run(netns, "ip", "link", "set", "qsfp56-dd-2-1", "down")  # admin down on the switch
    assert _row(api, "qsfp56-dd-2-1")["disabled"] == "true"


def test_autoneg_on_200g_installs_tbf_and_forcing_removes_it(api: Any, netns: str) -> None:
    [tbf] = _tbf(netns, "qsfp56-dd-1-1")
    assert tbf["options"]["rate"] == 5000 * 1_000_000 // 8  # bytes per second
    assert _monitor(api, "qsfp56-dd-1-1")["rate"] == "100Gbps"
    assert _tbf(netns, "qsfp56-dd-2-1") == []
    api.get_resource("/interface/ethernet").set(
        id="qsfp56-dd-1-1", speed="200G-baseCR4", **{"auto-negotiation": "no"}
    )
    assert _tbf(netns, "qsfp56-dd-1-1") == []
    assert _monitor(api, "qsfp56-dd-1-1")["rate"] == "200Gbps"


def test_bridge_port_enslaves_netdev(api: Any, netns: str) -> None:
    api.get_resource("/interface/bridge").add(name="bridge1")
    api.get_resource("/interface/bridge/port").add(bridge="bridge1", interface="qsfp56-dd-1-1")
    assert link(netns, "qsfp56-dd-1-1")["master"] == "bridge1"
    assert "bridge1" in ns_run(netns, "ip", "-o", "link", "show", "type", "bridge")


def test_entry_point_reports_ready_and_serves(netns: str, state_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabric.lab.routeros", "serve", "--state", str(state_path),
         "--listen", "127.0.0.1:0", "--netns", netns],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        pool = routeros_api.RouterOsApiPool(
            "127.0.0.1", username="admin", password="pw", port=port, plaintext_login=True
        )
        identity = pool.get_api().get_resource("/system/identity").get()
        assert identity[0]["name"] == "crs804"
        pool.disconnect()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


# --- link training and the factory bridge on the real kernel --------------------------------

TRAINING_S = 0.8


def _carrier(ns: str, name: str) -> bool:
    return "LOWER_UP" in link(ns, name)["flags"]


def _wait(check: Any, timeout: float = TRAINING_S + 5) -> float:
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout}s")
        time.sleep(0.02)
    return time.monotonic() - start


@pytest.fixture
def served(netns: str, tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    """Factory state with ether1 (a veth like the lab's management netdev), training 0.8 s."""
    ns_run(netns, "ip", "link", "add", "ether1", "type", "veth", "peer", "name", "mgmt-peer")
    ns_run(netns, "ip", "link", "set", "ether1", "up")
    ns_run(netns, "ip", "link", "set", "mgmt-peer", "up")
    path = tmp_path / "factory.json"
    write_initial_state(path, "crs804", LANES, "admin", "pw", config=FACTORY,
                        mgmt_address="198.18.3.10/24")
    device = Device(StateFile(path), KernelBackend(netns), line_rate_mbit=10000,
                    training_s=TRAINING_S)
    device.record_settings()
    device.reconcile()
    server = ApiServer(("127.0.0.1", 0), device)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    pool = routeros_api.RouterOsApiPool(
        "127.0.0.1", username="admin", password="pw", port=server.server_address[1],
        plaintext_login=True,
    )  # fmt: skip
    try:
        yield pool.get_api(), path
    finally:
        pool.disconnect()
        server.shutdown()
        server.server_close()


def test_factory_bridge_enslaves_the_lanes_not_ether1(served: tuple[Any, Path], netns: str) -> None:
    api, _ = served
    assert link(netns, "bridge")["ifname"] == "bridge"
    assert {lane: link(netns, lane).get("master") for lane in LANES} == dict.fromkeys(
        LANES, "bridge")
    assert "master" not in link(netns, "ether1")
    assert [_monitor(api, lane)["status"] for lane in LANES] == ["link-ok", "link-ok"]


def test_training_drops_the_far_ends_carrier_then_restores_it(
    served: tuple[Any, Path], netns: str
) -> None:
    api, _ = served
    lane, peer = "qsfp56-dd-2-1", PEERS["qsfp56-dd-2-1"]
    assert _carrier(netns, peer)
    start = time.monotonic()
    api.get_resource("/interface/ethernet").set(id=lane, **{"fec-mode": "fec91"})
    assert not _carrier(netns, peer)  # at once: NO-CARRIER on the far end
    assert "NO-CARRIER" in link(netns, peer)["flags"]
    assert (_monitor(api, lane)["status"], _row(api, lane)["disabled"]) == ("no-link", "false")
    _wait(lambda: _carrier(netns, peer))
    assert time.monotonic() - start >= TRAINING_S * 0.9
    # the trainer writes the lane's state just after its netdev is up again
    _wait(lambda: _monitor(api, lane)["status"] == "link-ok")
    assert link(netns, lane)["master"] == "bridge"  # still a bridge port


def test_a_console_change_trains_too(served: tuple[Any, Path], netns: str) -> None:
    """The SSH CLI is its own process; the API server's trainer brings the lane back."""
    api, path = served
    lane, peer = "qsfp56-dd-1-1", PEERS["qsfp56-dd-1-1"]
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "fabric.lab.routeros", "shell", "--state", str(path),
         "--netns", netns],
        input=f"/interface ethernet set {lane} speed=200G-baseCR4 auto-negotiation=no\n/quit\n",
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    assert "failure" not in proc.stdout and "no such" not in proc.stdout, proc.stdout
    assert not _carrier(netns, peer)
    _wait(lambda: _carrier(netns, peer))
    assert time.monotonic() - start >= TRAINING_S * 0.9
    # the trainer writes the lane's state just after its netdev is up again (a clean-clone
    # CI run read the monitor in between: no `rate` yet)
    _wait(lambda: _monitor(api, lane)["status"] == "link-ok")
    mon = _monitor(api, lane)
    assert (mon["status"], mon["rate"]) == ("link-ok", "200Gbps")
    assert _tbf(netns, lane) == []  # forced 200G over a 200G cable: no shaping


# --- counters: read from the kernel on every request ------------------------------------------

COUNTED = "qsfp56-dd-2-1"  # 400G cable, auto-negotiation: no shaping, so its root is noqueue
FRAME = 64


def _send(ns: str, dev: str, frames: int) -> None:
    """`frames` broadcast frames of FRAME bytes out of `dev` through its qdisc (AF_PACKET)."""
    code = ("import socket,sys; s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
            "s.bind((sys.argv[1], 0)); f=b'\\xff'*6+b'\\x02'*6+b'\\x88\\xb5'+bytes(50)\n"
            "for _ in range(int(sys.argv[2])): s.send(f)")
    ns_run(ns, sys.executable, "-c", code, dev, str(frames))


def _counters(api: Any, lane: str) -> dict[str, int]:
    rows = [*api.get_resource("/interface").call("print", {"stats": ""}),
            *api.get_resource("/interface/ethernet").call("print", {"stats": ""})]
    out: dict[str, int] = {}
    for row in rows:
        if row["name"] == lane:
            out |= {k: int(v) for k, v in row.items() if v.isdigit()}
    return out


def test_counters_are_the_lanes_kernel_counters(api: Any, netns: str) -> None:
    before = _counters(api, COUNTED)
    _send(netns, COUNTED, 30)
    _send(netns, PEERS[COUNTED], 20)
    after = _counters(api, COUNTED)
    grew = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    # nothing in the namespace takes ethertype 0x88b5, so the kernel counts each received
    # frame as dropped too (rx_dropped: RouterOS rx-drop in both menus)
    assert grew == {"tx-packet": 30, "tx-byte": 30 * FRAME, "tx-bytes": 30 * FRAME,
                    "rx-packet": 20, "rx-byte": 20 * FRAME, "rx-bytes": 20 * FRAME,
                    "rx-drop": 20}
    stats = json.loads(ns_run(netns, "ip", "-s", "-s", "-j", "link", "show", "dev",
                              COUNTED))[0]["stats64"]
    assert (after["tx-packet"], after["rx-packet"]) == (stats["tx"]["packets"],
                                                        stats["rx"]["packets"])


def test_link_downs_is_the_lanes_carrier_down_count(api: Any, netns: str) -> None:
    before = _counters(api, COUNTED)["link-downs"]
    for _ in range(2):  # the far end goes down and up: the lane loses carrier twice
        ns_run(netns, "ip", "link", "set", PEERS[COUNTED], "down")
        ns_run(netns, "ip", "link", "set", PEERS[COUNTED], "up")
    assert _counters(api, COUNTED)["link-downs"] == before + 2
    sysfs = ns_run(netns, "cat", f"/sys/class/net/{COUNTED}/carrier_down_count")
    assert int(sysfs) == before + 2


def test_root_qdisc_drops_are_tx_queue_drop(api: Any, netns: str) -> None:
    from fabric.lab.faults import drop_bytecode

    ns_run(netns, "tc", "qdisc", "add", "dev", COUNTED, "root", "handle", "1:", "htb")
    ns_run(netns, "tc", "filter", "add", "dev", COUNTED, "parent", "1:", "bpf", "bytecode",
           drop_bytecode(100), "da")
    before = _counters(api, COUNTED)
    _send(netns, COUNTED, 25)
    after = _counters(api, COUNTED)
    assert after["tx-queue-drop"] - before["tx-queue-drop"] == 25
    assert after["tx-packet"] == before["tx-packet"]  # none of them left
    assert after["tx-drop"] == before["tx-drop"]  # the netdev itself dropped nothing
