"""Link training on a fake kernel: a speed/FEC/autoneg change (or re-enabling a lane) holds the
lane at no-link, its netdev down, for the configured delay; the server's trainer brings it up."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.cli import Cli
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.state import StateFile

from .conftest import MakeLab, connect
from .helpers import Lab

TRAINING_S = 0.6
LANE = "qsfp56-dd-2-1"  # 400G cable, auto-negotiation: link-ok at 400G from the start


def wait_for(check: Callable[[], bool], timeout: float = TRAINING_S + 5) -> float:
    """Poll until `check()` holds; the seconds it took (AssertionError past `timeout`)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout}s")
        time.sleep(0.02)
    return time.monotonic() - start


@pytest.fixture
def trained(make_lab: MakeLab) -> Lab:
    return make_lab(training_s=TRAINING_S)


@pytest.fixture
def eth(trained: Lab) -> Iterator[Any]:
    pool = connect(trained)
    try:
        yield pool.get_api().get_resource("/interface/ethernet")
    finally:
        pool.disconnect()


def status(eth: Any, lane: str = LANE) -> str:
    return str(eth.call("monitor", {"numbers": lane, "once": ""})[0]["status"])


def row(eth: Any, lane: str = LANE) -> dict[str, str]:
    return dict(eth.get(name=lane)[0])


def deadline(lab: Lab, lane: str = LANE) -> float:
    found = StateFile(lab.state_path).load().lane(lane)
    assert found is not None
    return found.training_until


def test_startup_does_not_train(trained: Lab, eth: Any) -> None:
    for lane in ("qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1"):
        assert status(eth, lane) == "link-ok"
        assert deadline(trained, lane) == 0.0
    assert not [c for c in trained.backend.calls if c[0] == "admin"]


@pytest.mark.parametrize(
    "change",
    [
        {"speed": "200G-baseCR4", "auto-negotiation": "no"},
        {"fec-mode": "fec91"},
        {"auto-negotiation": "no"},  # 400G-baseCR8 forced: still links at 400G
    ],
)
def test_a_phy_change_holds_no_link_for_the_delay(
    trained: Lab, eth: Any, change: dict[str, str]
) -> None:
    start = time.monotonic()
    eth.set(id=LANE, **change)
    mon = eth.call("monitor", {"numbers": LANE, "once": ""})[0]
    assert (mon["status"], mon["sfp-rx-loss"], mon["sfp-module-present"]) == (
        "no-link", "false", "true")  # training, not a dark cable
    r = row(eth)
    assert (r["running"], r["disabled"]) == ("false", "false")  # training is not "disabled"
    assert trained.backend.links()[LANE].admin_up is False  # the far end loses carrier
    port = wait_for(lambda: status(eth) == "link-ok")
    took = time.monotonic() - start
    assert TRAINING_S * 0.9 <= took <= TRAINING_S + 2, took
    assert port <= TRAINING_S + 2
    assert trained.backend.links()[LANE].admin_up is True
    assert (row(eth)["running"], deadline(trained)) == ("true", 0.0)


def test_a_set_that_changes_nothing_does_not_train(trained: Lab, eth: Any) -> None:
    trained.backend.calls.clear()
    current = row(eth)
    eth.set(id=LANE, speed=current["speed"], **{"auto-negotiation": "yes", "fec-mode": "auto"})
    eth.set(id=LANE, mtu="9000")  # MTU is no PHY change either
    assert status(eth) == "link-ok"
    assert deadline(trained) == 0.0
    assert not [c for c in trained.backend.calls if c[0] == "admin"]


def test_the_same_value_twice_restarts_nothing_a_new_value_does(trained: Lab, eth: Any) -> None:
    eth.set(id=LANE, **{"fec-mode": "fec91"})
    first = deadline(trained)
    assert first > time.time()
    eth.set(id=LANE, **{"fec-mode": "fec91"})
    eth.set(id=LANE, comment="training")
    assert deadline(trained) == first
    eth.set(id=LANE, **{"auto-negotiation": "no"})
    assert deadline(trained) > first  # a real change restarts the training
    wait_for(lambda: status(eth) == "link-ok")


def test_reenabling_a_lane_trains_disabling_does_not(trained: Lab, eth: Any) -> None:
    eth.set(id=LANE, disabled="yes")
    r = row(eth)
    assert (r["disabled"], r["running"], deadline(trained)) == ("true", "false", 0.0)
    eth.call("enable", {"numbers": LANE})
    assert status(eth) == "no-link" and row(eth)["disabled"] == "false"
    assert deadline(trained) > 0
    wait_for(lambda: status(eth) == "link-ok")


def test_enabling_a_sub_interface_retrains_its_port_group(trained: Lab, eth: Any) -> None:
    eth.set(id="qsfp56-dd-1-1", disabled="yes")
    sibling = "qsfp56-dd-1-5"
    assert status(eth, sibling) == "no-link"
    assert row(eth, sibling)["disabled"] == "false"
    assert status(eth, LANE) == "link-ok"  # another port: untouched
    wait_for(lambda: status(eth, sibling) == "link-ok")
    assert row(eth, "qsfp56-dd-1-1")["disabled"] == "true"


def test_a_lane_taken_down_underneath_still_reads_disabled(trained: Lab, eth: Any) -> None:
    trained.backend.poke(LANE, admin_up=False)
    r = row(eth)
    assert (r["disabled"], r["running"]) == ("true", "false")
    trained.backend.poke(LANE, admin_up=True, carrier=False)  # the far end went dark
    assert (row(eth)["disabled"], status(eth)) == ("false", "no-link")
    mon = eth.call("monitor", {"numbers": LANE, "once": ""})[0]
    assert mon["sfp-rx-loss"] == "true"


def test_a_bridge_port_training_is_inactive(trained: Lab, eth: Any) -> None:
    pool = connect(trained)
    try:
        api = pool.get_api()
        api.get_resource("/interface/bridge").add(name="bridge")
        ports = api.get_resource("/interface/bridge/port")
        ports.add(bridge="bridge", interface=LANE)
        eth.set(id=LANE, **{"fec-mode": "fec91"})
        assert ports.get(interface=LANE)[0]["inactive"] == "true"
        wait_for(lambda: ports.get(interface=LANE)[0]["inactive"] == "false")
    finally:
        pool.disconnect()


@pytest.mark.parametrize("shares_kernel", [True, False])
def test_a_console_change_trains_through_the_servers_trainer(
    trained: Lab, eth: Any, shares_kernel: bool
) -> None:
    """The SSH CLI is another process on the same state file: it records the deadline (and
    downs the lane when it can reach the kernel); the API server brings the lane back."""
    backend = trained.backend if shares_kernel else FakeBackend({LANE: 1500})
    console = Cli(Device(StateFile(trained.state_path), backend))  # delay: the server's
    trained.backend.calls.clear()
    start = time.monotonic()
    assert console.execute(f"/interface ethernet set {LANE} fec-mode=fec91") == ""
    assert deadline(trained) > time.time()
    wait_for(lambda: trained.backend.links()[LANE].admin_up is False, timeout=2)
    assert status(eth) == "no-link"
    wait_for(lambda: status(eth) == "link-ok")
    assert time.monotonic() - start >= TRAINING_S * 0.9
    admin = [c for c in trained.backend.calls if c[0] == "admin" and c[1] == LANE]
    assert admin == [("admin", LANE, "down"), ("admin", LANE, "up")]


def test_no_delay_means_no_training(lab: Lab) -> None:
    pool = connect(lab)
    try:
        eth = pool.get_api().get_resource("/interface/ethernet")
        eth.set(id=LANE, **{"fec-mode": "fec91"})
        assert status(eth) == "link-ok"
    finally:
        pool.disconnect()
