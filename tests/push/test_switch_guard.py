"""The switch guard: a factory CRS804 keeps its management address on `bridge` (the fabric
bridge); the API session's own address (not the inventory name) decides what it rides on; a
second bridge is never created."""

from __future__ import annotations

from dataclasses import replace

from fabric.devices.crs804.diff import diff_switch
from fabric.push.apply import PushOutcome
from fabric.push.diff import diff_push
from tests.push.helpers import lab_intent, recorded

HOSTS = ["spark01", "spark02", "spark03", "spark04", "crs804"]
MGMT = "198.18.3.10"


def factory(**extra: object):  # type: ignore[no-untyped-def]
    """The recorded fresh switch, as a factory CRS804: every port in `bridge`, the management
    address on `bridge`, and this API session connected to that address."""
    facts, sparks, switch = recorded("fresh")
    ports = [{"id": f"*{n}", "bridge": "bridge", "interface": name, "hw": "true",
              "disabled": "false"}
             for n, name in enumerate(["ether1", "qsfp56-dd-1-1", "qsfp56-dd-2-1"])]
    rows = {**switch.rows, "/interface/bridge": [{"id": "*B", "name": "bridge"}],
            "/interface/bridge/port": ports}
    snap = replace(switch, rows=rows, session_address=MGMT, connected_interface="bridge",
                   addresses=[{"address": f"{MGMT}/24", "interface": "bridge",
                               "actual-interface": "bridge", "disabled": "false"}])
    return facts, sparks, replace(snap, **extra)


def test_factory_switch_is_refused_with_the_steps_and_nothing_changes() -> None:
    facts, sparks, snap = factory()
    changeset = diff_push(lab_intent(), facts, sparks, snap, HOSTS)
    assert changeset.switch is not None and changeset.switch.refused
    why = changeset.switch.refused
    assert f"the management address {MGMT}/24 is on `bridge`" in why
    assert "share the one hardware-offloaded bridge" in why
    assert ("/interface/bridge/port/remove [find interface=ether1]; "
            "/ip/address/set [find interface=bridge] interface=ether1") in why
    assert changeset.hosts_with_changes() == []
    assert PushOutcome(changeset).exit_code == 3


def test_prepared_switch_is_accepted() -> None:
    facts, sparks, snap = factory(connected_interface="ether1", addresses=[
        {"address": f"{MGMT}/24", "interface": "ether1", "disabled": "false"}])
    rows = dict(snap.rows)
    rows["/interface/bridge/port"] = [r for r in rows["/interface/bridge/port"]
                                      if r["interface"] != "ether1"]
    changeset = diff_push(lab_intent(), facts, sparks, replace(snap, rows=rows), HOSTS)
    assert changeset.switch is not None and changeset.switch.refused is None
    assert "crs804" in changeset.hosts_with_changes()


def test_a_session_on_a_lane_push_changes_is_refused() -> None:
    facts, _, snap = factory(connected_interface="qsfp56-dd-1-1", addresses=[
        {"address": f"{MGMT}/24", "interface": "qsfp56-dd-1-1", "disabled": "false"}])
    assert facts.switch is not None
    refused = diff_switch(lab_intent(), facts.switch, snap).refused or ""
    assert f"this API session comes in on {MGMT} (qsfp56-dd-1-1)" in refused


def test_the_session_address_not_the_inventory_name_decides() -> None:
    """The old guard compared /ip/address with the inventory hostname (a DNS name), so it
    never matched; the task now reads the API socket's peer address."""
    from fabric.devices.crs804.backup_switch_config import _session_address

    class Sock:
        def getsockname(self) -> tuple[str, int]:
            return ("198.18.3.1", 40000)

        def getpeername(self) -> tuple[str, int]:
            return (MGMT, 8728)

    class Pool:
        socket = type("W", (), {"socket": Sock()})()

    from fabric.remote.routeros_api import RouterOsApiConnection

    plugin = RouterOsApiConnection()
    plugin._pool = Pool()
    task = type("T", (), {"host": type("H", (), {"connections": {"routeros_api": plugin},
                                                 "hostname": "crs804.example"})()})()
    assert _session_address(task) == MGMT  # type: ignore[arg-type]


def test_a_second_bridge_is_never_created() -> None:
    facts, _, snap = recorded("fresh")
    assert facts.switch is not None
    other = replace(snap, rows={**snap.rows, "/interface/bridge": [{"id": "*9",
                                                                     "name": "bridge1"}]})
    refused = diff_switch(lab_intent(), facts.switch, other).refused or ""
    assert "already has bridge bridge1" in refused
    assert "Set `switch: bridge: bridge1` in the topology" in refused
