"""Every fault changes what the "hardware" reports, and `fabric lab heal` restores it; the
faults that act during a run (`flap`, `drop`) are also caught by `fabric validate`, failing on
their link only (the table at the end). All on the shared pushed labs (and the ring4 as built
for a swap between Sparks), each fault healed by its test."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import routeros_api

from fabric.lab import faults, ns
from fabric.lab.lifecycle.registry import LabInfo
from tests.conftest import run_cli
from tests.lab.conftest import (
    RING_LINK,
    STAR_LINK,
    Inject,
    Labs,
    cable_peer,
    eventually,
    failing,
    in_host,
    ip_links,
    lldp_neighbors,
    netmiko_linux,
    validate,
)

pytestmark = pytest.mark.lab


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
def star(star4_pushed: LabInfo) -> LabInfo:
    """star4 configured by `fabric push`: lanes forced to 200G, MTU 9000, addresses."""
    return star4_pushed


@pytest.fixture
def cli(star: LabInfo, ring4: LabInfo, capsys: pytest.CaptureFixture[str]) -> Iterator[
        Callable[..., tuple[int, str]]]:
    def call(*args: str, lab: LabInfo = star) -> tuple[int, str]:
        code, _, err = run_cli(["lab", *args, "--name", lab.name], capsys)
        return code, err

    yield call
    for name in (star.name, ring4.name):
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
    assert cable_peer(star, "spark01", "cx7-p0") == ("crs804", "qsfp56-dd-1-1")
    before = {p for _, _, p in lldp_neighbors(star, "spark01")}
    assert cli("fault", "swap", "crs804:qsfp56-dd-1-1,crs804:qsfp56-dd-2-1")[0] == 0
    assert cable_peer(star, "spark01", "cx7-p0") == ("crs804", "qsfp56-dd-2-1")
    assert cable_peer(star, "spark02", "cx7-p0") == ("crs804", "qsfp56-dd-1-1")
    # nothing restarted: what lldpd learned before the move stays until its TTL, as in the field
    assert before <= {p for _, _, p in lldp_neighbors(star, "spark01")}
    assert eventually(lambda: "qsfp56-dd-2-1" in {p for _, _, p in lldp_neighbors(star, "spark01")})
    assert ip_links(star, "crs804")["qsfp56-dd-1-1"]["mtu"] == 9000
    assert cli("heal")[0] == 0
    assert cable_peer(star, "spark01", "cx7-p0") == ("crs804", "qsfp56-dd-1-1")
    assert cable_peer(star, "spark02", "cx7-p0") == ("crs804", "qsfp56-dd-2-1")


def test_degrade_shapes_the_cable(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "degrade", "spark03:p0")[0] == 0
    qdisc = json.loads(in_host(star, "spark03", "tc", "-j", "qdisc", "show", "dev", "cx7-p0"))
    assert [q for q in qdisc if q["kind"] == "tbf" and q["options"]["rate"] == 62_500_000]
    assert cli("heal")[0] == 0
    qdisc = json.loads(in_host(star, "spark03", "tc", "-j", "qdisc", "show", "dev", "cx7-p0"))
    assert not [q for q in qdisc if q["kind"] == "tbf"]


def test_autoneg_fault_drops_the_lane_to_100g(star: LabInfo, cli: Any) -> None:
    def rate() -> str | None:  # None while the lane trains (no-link) after the change
        return _monitor(star, "qsfp56-dd-4-1").get("rate")

    assert eventually(lambda: rate() == "200Gbps")
    assert cli("fault", "autoneg", "qsfp56-dd-4-1")[0] == 0
    assert eventually(lambda: rate() == "100Gbps")
    assert cli("heal")[0] == 0
    assert eventually(lambda: rate() == "200Gbps")


def test_address_faults_need_a_configured_host(star: LabInfo, cli: Any) -> None:
    pushed = [f"{a['local']}/{a['prefixlen']}" for a in
              ip_links(star, "spark04")["enp1s0f0np0"]["addr_info"] if a["family"] == "inet"]
    assert pushed == ["198.19.0.4/24"]
    in_host(star, "spark04", "ip", "addr", "del", "198.19.0.4/24", "dev", "enp1s0f0np0")
    try:
        code, err = cli("fault", "wrong-addr", "spark04:enp1s0f0np0")
        assert code == 3 and "no IPv4 address" in err
    finally:
        in_host(star, "spark04", "ip", "addr", "add", "198.19.0.4/24", "dev", "enp1s0f0np0")
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


def test_swap_on_a_ring_repairs_cables_between_sparks(ring4: LabInfo, cli: Any) -> None:
    """Re-plugged as in the field: the twins stay the same netdevs (same ifindex), each sees
    its carrier go and come back, and lldpd keeps the neighbour it heard before the move
    beside the new one (nothing restarted, no port of lldpd's re-created)."""
    ring = ring4
    twin = ip_links(ring, "spark01")["enp1s0f0np0"]
    downs = _carrier_downs(ring, "spark01", "enp1s0f0np0")
    assert cable_peer(ring, "spark01", "cx7-p0") == ("spark02", "cx7-p1")
    assert ("enp1s0f0np0", "spark02", "enp1s0f1np1") in lldp_neighbors(ring, "spark01")
    assert cli("fault", "swap", "spark01:p0,spark03:p0", lab=ring)[0] == 0
    assert cable_peer(ring, "spark01", "cx7-p0") == ("spark04", "cx7-p1")
    assert cable_peer(ring, "spark03", "cx7-p0") == ("spark02", "cx7-p1")
    assert eventually(lambda: "spark04" in {h for i, h, _ in lldp_neighbors(ring, "spark01")
                                            if i == "enp1s0f0np0"})
    assert ("enp1s0f0np0", "spark02", "enp1s0f1np1") in lldp_neighbors(ring, "spark01")
    now = ip_links(ring, "spark01")["enp1s0f0np0"]
    assert (now["ifindex"], now["address"]) == (twin["ifindex"], twin["address"])
    assert _carrier_downs(ring, "spark01", "enp1s0f0np0") > downs
    mac = twin["address"]
    assert cli("heal", lab=ring)[0] == 0
    assert cable_peer(ring, "spark01", "cx7-p0") == ("spark02", "cx7-p1")
    assert cable_peer(ring, "spark03", "cx7-p0") == ("spark04", "cx7-p1")
    assert ip_links(ring, "spark01")["enp1s0f0np0"]["address"] == mac


def test_link_down_on_a_ring_darkens_both_ends_of_the_dac(ring4: LabInfo, cli: Any) -> None:
    """A cable between Sparks passes the patch panel, which passes no carrier itself: a dark
    end must still take the far Spark's light, as a DAC does."""
    ring = ring4
    assert _up(ring, "spark03", "enp1s0f1np1")
    assert cli("fault", "link-down", "spark02:p0", lab=ring)[0] == 0
    assert "LOWER_UP" not in ip_links(ring, "spark02")["enp1s0f0np0"]["flags"]
    assert "LOWER_UP" not in ip_links(ring, "spark03")["enp1s0f1np1"]["flags"]
    assert cli("heal", lab=ring)[0] == 0
    assert eventually(lambda: _up(ring, "spark03", "enp1s0f1np1")
                      and _up(ring, "spark02", "enp1s0f0np0"))


# --- flap and drop: what the kernel and the switch see --------------------------------------


def _carrier_downs(lab: LabInfo, host: str, dev: str) -> int:
    return int(in_host(lab, host, "cat", f"/sys/class/net/{dev}/carrier_down_count"))


def _lane_row(lab: LabInfo, lane: str, menu: str = "/interface") -> dict[str, str]:
    pool = _api(lab)
    try:
        rows = pool.get_api().get_resource(menu).call("print", {"stats": ""})
        return next(dict(r) for r in rows if r["name"] == lane)
    finally:
        pool.disconnect()


def _up(lab: LabInfo, host: str, dev: str) -> bool:
    return {"UP", "LOWER_UP"} <= set(ip_links(lab, host)[dev]["flags"])


def test_flap_bounces_the_cable_at_the_spark_end_until_healed(star: LabInfo, cli: Any) -> None:
    lane = "qsfp56-dd-3-1"
    before = _carrier_downs(star, "crs804", lane)
    twin_before = _carrier_downs(star, "spark03", "enp1s0f0np0")
    assert cli("fault", "flap", lane)[0] == 0
    [fault] = faults.active_faults(star.name)
    pid = int(fault.undo["pid"])
    assert (fault.undo["host"], fault.undo["dev"]) == ("spark03", "cx7-p0")
    assert os.stat(f"/proc/{pid}/ns/net").st_ino == ns.netns_inode(star.namespaces["spark03"])
    assert eventually(lambda: _carrier_downs(star, "crs804", lane) >= before + 2)
    row = _lane_row(star, lane)
    assert row["disabled"] == "false"  # the lane stays enabled: its cable bounces
    assert int(row["link-downs"]) >= before + 2
    assert "UP" in ip_links(star, "crs804")[lane]["flags"]
    assert eventually(lambda: _carrier_downs(star, "spark03", "enp1s0f0np0") > twin_before)
    assert cli("heal")[0] == 0
    assert not ns.alive(pid)
    assert _up(star, "spark03", "cx7-p0") and _up(star, "crs804", lane)
    assert eventually(lambda: _up(star, "spark03", "enp1s0f0np0"))


def test_a_flapper_dies_with_its_lab(labs: Labs, capsys: pytest.CaptureFixture[str]) -> None:
    pid = None
    with labs.private("ring4", "t-flapdown", switch_prepared=True) as lab:
        code, _, err = run_cli(["lab", "fault", "flap", "spark01:p0", "--name", lab.name], capsys)
        assert code == 0, err
        pid = int(faults.active_faults(lab.name)[0].undo["pid"])
        assert ns.alive(pid)
    assert pid is not None and not ns.alive(pid)


_SEND = """
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\\xff" * 6 + b"\\x02" * 6 + b"\\x88\\xb5" + bytes(50)
for _ in range(int(sys.argv[2])):
    try:
        s.send(frame)
    except OSError:  # ENOBUFS: the queue below dropped it (and counted it)
        pass
"""


def _send(lab: LabInfo, host: str, dev: str, frames: int) -> None:
    """Frames out of `dev` through its qdiscs, as any traffic would leave."""
    in_host(lab, host, sys.executable, "-c", _SEND, dev, str(frames))


def _tx_dropped(lab: LabInfo, host: str, dev: str) -> int:
    data = json.loads(in_host(lab, host, "ip", "-s", "-s", "-j", "link", "show", "dev", dev))
    return int(data[0]["stats64"]["tx"]["dropped"])


def _qdisc_kinds(lab: LabInfo, host: str, dev: str) -> set[str]:
    return {q["kind"] for q in json.loads(in_host(lab, host, "tc", "-j", "qdisc", "show", "dev",
                                                  dev))}


def test_drop_loses_frames_where_each_end_sends_them(star: LabInfo, cli: Any) -> None:
    lane, twin = "qsfp56-dd-3-1", "enp1s0f0np0"
    assert cli("fault", "drop", "spark03:p0@both,20%")[0] == 0
    assert "clsact" in _qdisc_kinds(star, "spark03", "cx7-p0")
    assert "htb" in _qdisc_kinds(star, "crs804", lane)
    twin_before = _tx_dropped(star, "spark03", twin)
    lane_before = _lane_row(star, lane)
    _send(star, "spark03", twin, 300)
    _send(star, "crs804", lane, 300)
    twin_lost = _tx_dropped(star, "spark03", twin) - twin_before
    lane_after = _lane_row(star, lane)
    lane_lost = int(lane_after["tx-queue-drop"]) - int(lane_before["tx-queue-drop"])
    assert 0 < twin_lost < 300 and 0 < lane_lost < 300, (twin_lost, lane_lost)
    assert int(lane_after["tx-packet"]) - int(lane_before["tx-packet"]) >= 300 - lane_lost
    assert cli("heal")[0] == 0
    assert _qdisc_kinds(star, "spark03", "cx7-p0") == {"noqueue"}
    assert _qdisc_kinds(star, "crs804", lane) == {"noqueue"}


def test_drop_one_way_touches_only_the_sending_end(star: LabInfo, cli: Any) -> None:
    assert cli("fault", "drop", "spark02:p0@rx")[0] == 0  # what spark02 receives: lane sends
    assert _qdisc_kinds(star, "spark02", "cx7-p0") == {"noqueue"}
    assert "htb" in _qdisc_kinds(star, "crs804", "qsfp56-dd-2-1")
    code, err = cli("fault", "drop", "qsfp56-dd-2-1@tx")
    assert code == 3 and "root qdisc" in err  # one drop per sending end
    assert cli("heal")[0] == 0
    assert _qdisc_kinds(star, "crs804", "qsfp56-dd-2-1") == {"noqueue"}


def test_bad_flap_and_drop_targets_are_input_errors(cli: Any) -> None:
    assert cli("fault", "drop", "spark01:p0@sideways")[0] == 2
    assert cli("fault", "drop", "spark01:p0@0%")[0] == 2
    assert cli("fault", "flap", "spark09:p0")[0] == 2
    assert cli("fault", "drop", "qsfp56-dd-4-8")[0] == 2  # no cable there


# --- flap and drop under `fabric validate` on pushed labs ------------------------------------


@pytest.fixture(scope="module")
def pushed_star(star4_pushed: LabInfo) -> LabInfo:
    return star4_pushed


@pytest.fixture(scope="module")
def pushed_ring(ring4_pushed: LabInfo) -> LabInfo:
    return ring4_pushed


@dataclass(frozen=True)
class Live:
    """A fault that acts during the run: the link it is on, the counters check that must fail
    and the hosts whose counters fail it (the switch lane counts as `crs804`)."""

    lab: str
    kind: str
    target: str
    link: str
    check: str
    counted_by: frozenset[str]


def _live(lab: str, kind: str, target: str, link: str, check: str, hosts: set[str]) -> Any:
    return pytest.param(Live(lab, kind, target, link, check, frozenset(hosts)),
                        id=f"{lab}-{kind}-{target}")


LIVE = [
    _live("star", "flap", "qsfp56-dd-3-1", STAR_LINK["spark03"], "counters.flaps",
          {"spark03", "crs804"}),
    _live("star", "drop", "spark02:p0", STAR_LINK["spark02"], "counters.drops",
          {"spark02", "crs804"}),
    _live("star", "drop", "qsfp56-dd-4-1@tx", STAR_LINK["spark04"], "counters.drops",
          {"crs804"}),
    _live("star", "drop", "spark01:p0@tx,10%", STAR_LINK["spark01"], "counters.drops",
          {"spark01"}),
    _live("ring", "flap", "spark02:p0", RING_LINK[2], "counters.flaps", {"spark02", "spark03"}),
    _live("ring", "drop", RING_LINK[3], RING_LINK[3], "counters.drops", {"spark03", "spark04"}),
]


@pytest.mark.parametrize("fault", LIVE)
def test_validate_catches_a_live_fault_on_its_link_only(
        fault: Live, request: pytest.FixtureRequest, tmp_path: Path, inject: Inject) -> None:
    lab: LabInfo = request.getfixturevalue(f"pushed_{fault.lab}")
    inject(lab.name, fault.kind, fault.target)
    code, report, err = validate(lab.name, tmp_path)
    bad = failing(report)
    assert code == 1 and bad, f"exit {code}\n{err[-3000:]}"
    ends = {h for h in fault.link.replace("--", ":").split(":")[::2]}
    # every failure is about the faulty link, or about one of its hosts as a whole
    astray = [r for r in bad if r["link"] != fault.link
              and not (r["link"] is None and r["host"] in ends)]
    assert not astray, json.dumps(astray, indent=1)
    counted = [r for r in bad if r["check"] == fault.check]
    assert {r["host"] for r in counted} == fault.counted_by, json.dumps(bad, indent=1)
    assert all(fault.link in r["message"] for r in counted)
