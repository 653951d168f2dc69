"""The LLDP receiver and link watcher against the REAL kernel (needs root): raw LLDP frames
from a far-end namespace over veths into the switch namespace, the lab's re-plug (two lane
netdevs swap names while down), and LLDP no longer counted as rx_dropped on a bridged lane."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import routeros_api

from fabric.lab.routeros.clock import Clock, format_datetime
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.kernel import KernelBackend
from fabric.lab.routeros.lldp import build_frame, build_lldpdu
from fabric.lab.routeros.rawsock import NetlinkSource, PacketSource, open_socket
from fabric.lab.routeros.server import ApiServer
from fabric.lab.routeros.state import StateFile, write_initial_state

from .helpers import FakeClock, eventually, local_epoch

pytestmark = pytest.mark.lab

A, B = "qsfp56-dd-1-1", "qsfp56-dd-2-1"
#: far-end netdev (in its own namespace) -> the Spark that talks through it
FAR = {"spark-a": ("spark01", "02:AA:00:00:00:01"), "spark-b": ("spark02", "02:AA:00:00:00:02")}
CABLE = {A: "spark-a", B: "spark-b"}
T0 = local_epoch("2026-12-01 09:30:00")


def ip(ns: str, *argv: str) -> str:
    return subprocess.run(["ip", "-n", ns, *argv], check=True, capture_output=True,
                          text=True).stdout


def ip_batch(ns: str, *lines: str) -> None:
    subprocess.run(["ip", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n", check=True,
                   capture_output=True, text=True)


def stats(ns: str, dev: str) -> dict[str, int]:
    s64 = json.loads(ip(ns, "-s", "-s", "-j", "link", "show", "dev", dev))[0]["stats64"]["rx"]
    return {"rx_packets": s64["packets"], "rx_dropped": s64["dropped"]}


@pytest.fixture
def nets() -> Iterator[tuple[str, str]]:
    """(switch namespace, far-end namespace), cabled A <-> spark-a and B <-> spark-b."""
    sw, far = f"fabtest-lldp-{os.getpid()}", f"fabtest-lldpfar-{os.getpid()}"
    for ns in (sw, far):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for ns in (sw, far):  # no IPv6: its own frames (DAD, MLD) would move the counters
            subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                            "net.ipv6.conf.all.disable_ipv6=1",
                            "net.ipv6.conf.default.disable_ipv6=1"], check=True)
        for lane, peer in CABLE.items():
            ip(sw, "link", "add", lane, "type", "veth", "peer", "name", peer, "netns", far)
            ip(sw, "link", "set", lane, "up")
            ip(far, "link", "set", peer, "up")
        yield sw, far
    finally:
        for ns in (sw, far):
            subprocess.run(["ip", "netns", "del", ns], check=False)


def send(far: str, peer: str, ttl: int = 120, count: int = 1, raw: bytes | None = None) -> None:
    """LLDP frames (as lldpd on the Spark would send them) out of ``peer`` in ``far``."""
    system, mac = FAR[peer]
    frame = raw if raw is not None else build_frame(mac, build_lldpdu(
        mac, "enp1s0f0np0", ttl, system_name=system, management_address="198.18.0.11"))
    sock = open_socket(far, socket.AF_PACKET, socket.SOCK_RAW, 0)  # sends only
    with sock:
        sock.bind((peer, 0))
        for _ in range(count):
            sock.send(frame)


@contextlib.contextmanager
def serving(sw: str, state: Path, clock: Clock) -> Iterator[Any]:
    device = Device(StateFile(state), KernelBackend(sw), line_rate_mbit=10000, training_s=0.0,
                    clock=clock)
    device.reconcile()
    server = ApiServer(("127.0.0.1", 0), device)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    pool = routeros_api.RouterOsApiPool("127.0.0.1", username="admin", password="pw",
                                        port=server.server_address[1], plaintext_login=True)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", dict.fromkeys(CABLE, 400), "admin", "pw")
    return path


def neighbors(api: Any) -> list[tuple[str, str, str, str]]:
    return [(r["id"], r["interface"], r["identity"], r["age"])
            for r in api.get_resource("/ip/neighbor").get()]


def times(api: Any, lane: str) -> tuple[str | None, str | None]:
    [row] = [r for r in api.get_resource("/interface").get() if r["name"] == lane]
    return row.get("last-link-down-time"), row.get("last-link-up-time")


def test_a_replug_by_renaming_keeps_old_entries_and_credits_the_new_name(
    nets: tuple[str, str], state: Path
) -> None:
    sw, far = nets
    clock = FakeClock(T0)
    at = format_datetime
    with serving(sw, state, clock) as api:
        assert times(api, A) == times(api, B) == (None, at(T0))  # carrier at start-up
        send(far, "spark-a")
        send(far, "spark-b")
        eventually(lambda: len(neighbors(api)) == 2)
        assert neighbors(api) == [("*1", A, "spark01", "0s"), ("*2", B, "spark02", "0s")]
        [row] = api.get_resource("/ip/neighbor").get(interface=A)
        assert (row["mac-address"], row["interface-name"], row["address"]) == (
            "02:AA:00:00:00:01", "enp1s0f0np0", "198.18.0.11")

        # the lab's re-plug (fabric.lab.faults._swap_names): down, swap the names, up
        clock.now = T0 + 30
        ip_batch(sw, f"link set {A} down", f"link set {B} down")
        eventually(lambda: times(api, A)[0] is not None and times(api, B)[0] is not None)
        ip_batch(sw, f"link set {A} name fl-swap-tmp", f"link set {B} name {A}",
                 f"link set fl-swap-tmp name {B}")
        clock.now = T0 + 31
        ip_batch(sw, f"link set {A} up", f"link set {B} up")
        eventually(lambda: times(api, A)[1] == times(api, B)[1] == at(T0 + 31))
        assert times(api, A) == times(api, B) == (at(T0 + 30), at(T0 + 31))
        # nothing heard since: the old entries stay under the old names, and age
        assert neighbors(api) == [("*1", A, "spark01", "31s"), ("*2", B, "spark02", "31s")]

        clock.now = T0 + 40  # spark01's cable now ends on the netdev named B
        send(far, "spark-a")
        eventually(lambda: len(neighbors(api)) == 3)
        clock.now = T0 + 45
        assert neighbors(api) == [("*1", A, "spark01", "45s"), ("*2", B, "spark02", "45s"),
                                  ("*3", B, "spark01", "5s")]
        send(far, "spark-b", raw=b"\x01\x80\xc2\x00\x00\x0e" + bytes(6) + b"\x88\xcc" + bytes(3))
        send(far, "spark-b")  # after a malformed frame the receiver still hears: *2 is fresh
        eventually(lambda: ("*4", A, "spark02", "0s") in neighbors(api))
        clock.now = T0 + 121  # *1 and *2 were last heard at T0 (TTL 120): gone
        assert neighbors(api) == [("*3", B, "spark01", "1m21s"), ("*4", A, "spark02", "1m16s")]
        send(far, "spark-a", ttl=0)  # lldpd's shutdown frame: at once
        eventually(lambda: [n[0] for n in neighbors(api)] == ["*4"])


def test_the_console_process_reads_what_the_server_observed(
    nets: tuple[str, str], state: Path
) -> None:
    """The SSH CLI is a separate process on the same state file (and a real clock here)."""
    sw, far = nets
    import time

    with serving(sw, state, time.time) as api:
        send(far, "spark-b")
        eventually(lambda: neighbors(api))
        up = times(api, B)[1]
        proc = subprocess.run(
            [sys.executable, "-m", "fabric.lab.routeros", "shell", "--state", str(state),
             "--netns", sw],
            input=f"/ip neighbor print detail\n/interface print detail where name={B}\n/quit\n",
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
    assert f"interface={B} address=198.18.0.11 mac-address=02:AA:00:00:00:02" in proc.stdout
    assert "identity=spark02" in proc.stdout and "discovered-by=lldp" in proc.stdout
    assert f"last-link-up-time={up} link-downs=" in proc.stdout, proc.stdout


def test_the_sockets_hand_over_at_once_not_at_their_timeout(nets: tuple[str, str]) -> None:
    """A batch ends with what is queued: the frame or event is stamped when it came."""
    import time

    sw, far = nets
    frames, links = PacketSource(sw), NetlinkSource(sw)
    try:
        assert {e.name for e in links.dump()} >= {A, B}
        start = time.monotonic()
        send(far, "spark-a", count=3)
        got = frames.recv(timeout=10.0)
        assert [name for name, _ in got] == [A, A, A] and time.monotonic() - start < 2.0
        start = time.monotonic()
        ip(far, "link", "set", "spark-b", "down")
        events = eventually(lambda: links.recv(timeout=10.0))
        assert (events[-1].name, events[-1].carrier) == (B, False)
        assert time.monotonic() - start < 2.0
    finally:
        frames.close()
        links.close()


N = 25


def test_lldp_frames_are_not_rx_dropped_while_the_receiver_runs(
    nets: tuple[str, str], state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a bridged lane the bridge passes LLDP up (link-local, not forwarded) and, with no
    handler for 0x88cc, the kernel counts every frame as rx_dropped; the receiver's packet
    socket is that handler. B (not bridged, no tap) drops them too until then."""
    sw, far = nets
    ip_batch(sw, "link add bridge1 type bridge", f"link set {A} master bridge1",
             "link set bridge1 up")

    def burst(settled: Any) -> dict[str, dict[str, int]]:
        """Counter deltas of N frames per lane, read once ``settled(deltas)`` holds (the
        kernel counts a drop when it has processed the frame, after the send)."""
        before = {lane: stats(sw, lane) for lane in CABLE}
        for peer in CABLE.values():
            send(far, peer, count=N)

        def deltas() -> dict[str, dict[str, int]]:
            after = {lane: stats(sw, lane) for lane in CABLE}
            return {lane: {k: after[lane][k] - before[lane][k] for k in after[lane]}
                    for lane in CABLE}

        eventually(lambda: settled(deltas()))
        return deltas()

    def all_dropped(d: dict[str, dict[str, int]]) -> bool:
        return all(v["rx_dropped"] >= N for v in d.values())

    without = burst(all_dropped)
    with serving(sw, state, FakeClock(T0)) as api:
        assert ip(sw, "-j", "link", "show", "dev", A).count('"master":"bridge1"') == 1
        # the receiver heard the frames: the kernel has processed every one of them
        running = burst(lambda _: {n[1] for n in neighbors(api)} == {A, B})
    stopped = burst(all_dropped)
    with capsys.disabled():
        print(f"\nrx deltas for {N} LLDP frames per lane: without receiver {without}, "
              f"with it {running}, after it stopped {stopped}")
    every = {lane: {"rx_packets": N, "rx_dropped": N} for lane in CABLE}
    assert without == every
    assert running == {lane: {"rx_packets": N, "rx_dropped": 0} for lane in CABLE}
    assert stopped == every
