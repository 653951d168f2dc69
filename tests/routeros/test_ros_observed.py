"""What the switch observes, through the menus on a fake kernel and a fake clock: `/ip/neighbor`
rows and ages, `/interface` link times, `/system/clock`, and the SSH CLI seeing the same through
the sidecar file."""

from __future__ import annotations

import json
from typing import Any

import pytest
import routeros_api

from fabric.lab.routeros.backend import FakeBackend, Neighbor
from fabric.lab.routeros.cli import Cli
from fabric.lab.routeros.clock import format_datetime
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.export import export_terse
from fabric.lab.routeros.lldp import build_frame, build_lldpdu
from fabric.lab.routeros.observed import sidecar_path
from fabric.lab.routeros.state import StateFile

from .conftest import MakeLab, connect
from .helpers import CABLED, FakeClock, Lab, eventually, local_epoch

T0 = local_epoch("2026-12-01 09:30:00")
SPARK = "02:AA:00:00:00:01"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def timed(make_lab: MakeLab, clock: FakeClock) -> Lab:
    return make_lab(clock=clock)


@pytest.fixture
def api(timed: Lab) -> Any:
    pool = connect(timed)
    try:
        yield pool.get_api()
    finally:
        pool.disconnect()


def frame(system: str, port: str, ttl: int = 120, mac: str = SPARK) -> bytes:
    return build_frame(mac, build_lldpdu(mac, port, ttl, system_name=system,
                                         system_description="Ubuntu 24.04.1 LTS Linux 6.11",
                                         management_address="198.18.0.11"))


def rows(api: Any, path: str) -> list[dict[str, str]]:
    return [dict(r) for r in api.get_resource(path).get()]


def neighbors(api: Any) -> list[tuple[str, str, str, str]]:
    return [(r[".id"] if ".id" in r else r["id"], r["interface"], r["identity"], r["age"])
            for r in rows(api, "/ip/neighbor")]


def lane(api: Any, name: str) -> dict[str, str]:
    [row] = [r for r in rows(api, "/interface") if r["name"] == name]
    return row


def test_a_neighbor_row_as_routeros_prints_it(timed: Lab, api: Any, clock: FakeClock) -> None:
    timed.backend.hear("qsfp56-dd-1-1", frame("spark01", "enp1s0f0np0"))
    eventually(lambda: rows(api, "/ip/neighbor"))
    clock.advance(65.7)
    [row] = rows(api, "/ip/neighbor")
    assert row == {"id": "*1", "interface": "qsfp56-dd-1-1", "address": "198.18.0.11",
                   "mac-address": SPARK, "identity": "spark01", "platform": "Ubuntu",
                   "interface-name": "enp1s0f0np0",
                   "system-description": "Ubuntu 24.04.1 LTS Linux 6.11",
                   "discovered-by": "lldp", "age": "1m5s"}


def test_ages_ttls_and_a_second_neighbour_on_a_port(timed: Lab, api: Any,
                                                    clock: FakeClock) -> None:
    timed.backend.hear("qsfp56-dd-1-1", frame("spark01", "enp1s0f0np0", ttl=120))
    eventually(lambda: neighbors(api))
    clock.advance(30)
    timed.backend.hear("qsfp56-dd-1-1", frame("spark02", "enp1s0f0np0", mac="02:AA:00:00:00:02"))
    eventually(lambda: len(neighbors(api)) == 2)
    clock.advance(10)
    assert neighbors(api) == [("*1", "qsfp56-dd-1-1", "spark01", "40s"),
                              ("*2", "qsfp56-dd-1-1", "spark02", "10s")]
    clock.advance(80)  # spark01 last heard 120 s ago: its TTL ran out
    assert neighbors(api) == [("*2", "qsfp56-dd-1-1", "spark02", "1m30s")]
    timed.backend.hear("qsfp56-dd-1-1", frame("spark02", "enp1s0f0np0", ttl=0,
                                              mac="02:AA:00:00:00:02"))
    eventually(lambda: neighbors(api) == [])


def test_discovery_without_lldp_lists_nothing(timed: Lab, api: Any) -> None:
    timed.backend.neighbor_list = [Neighbor("qsfp56-dd-2-1", "spark03", interface_name="p0")]
    eventually(lambda: neighbors(api))
    settings = api.get_resource("/ip/neighbor/discovery-settings")
    settings.call("set", {"protocol": "cdp,mndp"})
    assert neighbors(api) == []
    settings.call("set", {"protocol": "lldp"})
    assert [n[2] for n in neighbors(api)] == ["spark03"]


def test_system_clock(api: Any, clock: FakeClock) -> None:
    clock.advance(3.9)
    [row] = rows(api, "/system/clock")
    assert (row["date"], row["time"]) == ("2026-12-01", "09:30:03")
    assert set(row) == {"time", "date", "time-zone-autodetect", "time-zone-name", "gmt-offset",
                        "dst-active"}
    assert row["gmt-offset"][0] in "+-" and row["dst-active"] in ("true", "false")


def test_interface_link_times(timed: Lab, api: Any, clock: FakeClock) -> None:
    started = format_datetime(T0)
    row = lane(api, "qsfp56-dd-1-1")  # had carrier when the server started
    assert (row["last-link-up-time"], "last-link-down-time" in row) == (started, False)
    assert "last-link-up-time" not in lane(api, "qsfp56-dd-3-1")  # uncabled: never a link
    clock.advance(42)
    timed.backend.poke("qsfp56-dd-1-1", carrier=False)  # the far end went away
    eventually(lambda: "last-link-down-time" in lane(api, "qsfp56-dd-1-1"))
    clock.advance(5)
    timed.backend.poke("qsfp56-dd-1-1", carrier=True)
    eventually(lambda: lane(api, "qsfp56-dd-1-1")["last-link-up-time"] != started)
    row = lane(api, "qsfp56-dd-1-1")
    assert (row["last-link-down-time"], row["last-link-up-time"], row["link-downs"]) == (
        "2026-12-01 09:30:42", "2026-12-01 09:30:47", "1")
    keys = list(row)  # in RouterOS's order, before the counters
    assert keys.index("mac-address") < keys.index("last-link-down-time") < keys.index(
        "last-link-up-time") < keys.index("link-downs")


def test_a_renamed_port_keeps_the_name_s_history(timed: Lab, api: Any, clock: FakeClock) -> None:
    """The lab's re-plug (names swapped while down): each name's times are its port's."""
    fake, a, b = timed.backend, "qsfp56-dd-1-1", "qsfp56-dd-1-5"
    fake.hear(a, frame("spark01", "enp1s0f0np0"))
    fake.hear(b, frame("spark02", "enp1s0f0np0", mac="02:AA:00:00:00:02"))
    eventually(lambda: len(neighbors(api)) == 2)
    clock.advance(20)
    fake.poke(a, admin_up=False)
    fake.poke(b, admin_up=False)
    eventually(lambda: all("last-link-down-time" in lane(api, n) for n in (a, b)))
    fake.rename(a, "tmp")
    fake.rename(b, a)
    fake.rename("tmp", b)
    clock.advance(1)
    fake.poke(a, admin_up=True)
    fake.poke(b, admin_up=True)
    fake.hear(a, frame("spark02", "enp1s0f0np0", mac="02:AA:00:00:00:02"))  # now on a
    eventually(lambda: len(neighbors(api)) == 3 and all(
        lane(api, n)["last-link-up-time"].endswith(":21") for n in (a, b)))
    clock.advance(4)
    assert neighbors(api) == [("*1", a, "spark01", "25s"), ("*2", b, "spark02", "25s"),
                              ("*3", a, "spark02", "4s")]
    for name in (a, b):
        row = lane(api, name)
        assert (row["last-link-down-time"], row["last-link-up-time"]) == (
            "2026-12-01 09:30:20", "2026-12-01 09:30:21")
    assert not [r for r in rows(api, "/interface") if r["name"] == "tmp"]


def test_the_ssh_cli_sees_the_same_through_the_sidecar(timed: Lab, api: Any,
                                                       clock: FakeClock) -> None:
    timed.backend.hear("qsfp56-dd-2-1", frame("spark03", "enp1s0f0np0"))
    eventually(lambda: sidecar_path(timed.state_path).exists() and json.loads(
        sidecar_path(timed.state_path).read_text())["neighbors"])
    clock.advance(7)
    # the console is its own process: its own Device (kernel, clock) on the same state file
    console = Cli(Device(StateFile(timed.state_path), FakeBackend(dict.fromkeys(CABLED, 1500)),
                         clock=clock))
    text = console.execute("/ip neighbor print detail")
    assert text is not None
    assert 'interface=qsfp56-dd-2-1 address=198.18.0.11' in text
    assert "identity=spark03" in text and "age=7s" in text
    assert console.execute("/ip neighbor print count-only") == "1"
    table = console.execute("/ip neighbor print")
    assert table is not None and "AGE" in table.splitlines()[0]
    detail = console.execute("/interface print detail where name=qsfp56-dd-2-1")
    assert detail is not None and "last-link-up-time=2026-12-01 09:30:00 link-downs=0" in detail
    [api_clock] = rows(api, "/system/clock")
    assert console.execute("/system clock print") == "\n".join([
        "                  time: 09:30:07", "                  date: 2026-12-01",
        "  time-zone-autodetect: no",
        f"        time-zone-name: {api_clock['time-zone-name']}",
        f"            gmt-offset: {api_clock['gmt-offset']}",
        f"            dst-active: {'yes' if api_clock['dst-active'] == 'true' else 'no'}",
    ])
    export = export_terse(timed.device.load())
    assert "last-link" not in export and "age" not in export


def test_without_a_server_nothing_is_observed(tmp_path: Any) -> None:
    from fabric.lab.routeros.state import write_initial_state

    path = tmp_path / "alone.json"
    write_initial_state(path, "crs804", CABLED, "admin", "x")
    console = Cli(Device(StateFile(path), FakeBackend(dict.fromkeys(CABLED, 1500))))
    assert console.execute("/ip neighbor print count-only") == "0"
    assert "last-link" not in (console.execute("/interface print detail") or "x")


def test_the_librouteros_style_client_reads_the_clock(timed: Lab) -> None:
    pool = routeros_api.RouterOsApiPool("127.0.0.1", username="admin", password="s3cret==",
                                        port=timed.port, plaintext_login=True)
    try:
        [row] = pool.get_api().get_resource("/system/clock").call("print")
        assert row["date"] == "2026-12-01"
    finally:
        pool.disconnect()
