"""The switch chip and its QoS menus (emulated state), gated on the version the switch reports;
push's lossless calls converge on them and its rollback undoes them."""

from __future__ import annotations

from typing import Any

import pytest
import routeros_api

from fabric.devices.crs804.model import ApiCall
from fabric.devices.crs804.platform import QOS_PATHS
from fabric.devices.crs804.qos import switch_qos_calls
from fabric.devices.crs804.read_switch_qos import switch_qos_fact
from fabric.devices.crs804.restore_switch_backup import restore_qos
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.intent.build import load_intent
from fabric.lab.routeros.cli import Cli
from fabric.lab.routeros.export import export_terse
from fabric.lab.routeros.state import StateFile
from fabric.remote.shell import ros_call, ros_rows

from .conftest import MakeLab, connect
from .helpers import Lab, RawClient

QOS = "/interface/ethernet/switch/qos"
LANES = ("qsfp56-dd-1-1", "qsfp56-dd-1-5")


def set_version(lab: Lab, version: str) -> None:
    with StateFile(lab.state_path).edit() as state:
        state.version = version


def _one(rows: list[dict[str, str]], **match: str) -> dict[str, str]:
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, found
    return dict(found[0])


def trap(api: Any, path: str, command: str, args: dict[str, str]) -> str:
    with pytest.raises(routeros_api.exceptions.RouterOsApiCommunicationError) as err:
        api.get_resource(path).call(command, args)
    message: bytes = err.value.original_message
    return message.decode()


def test_factory_qos_is_the_manuals_default(api: Any) -> None:
    chip = _one(api.get_resource("/interface/ethernet/switch").get())
    assert (chip["name"], chip["type"], chip["qos-hw-offloading"]) == (
        "switch1", "Marvell-98DX7335", "false")
    profile = _one(api.get_resource(f"{QOS}/profile").get())
    assert (profile["name"], profile["traffic-class"], profile["default"]) == (
        "default", "1", "true")
    queues = api.get_resource(f"{QOS}/tx-manager/queue").get()
    assert [(q["traffic-class"], q["schedule"]) for q in queues][5:] == [
        ("5", "high-priority-group"), ("6", "strict-priority"), ("7", "strict-priority")]
    assert _one(queues, **{"traffic-class": "0"})["use-shared-buffers"] == "false"
    ports = api.get_resource(f"{QOS}/port").get()
    assert len(ports) == 34  # ether1, 32 lanes, the CPU port
    lane = _one(ports, name="qsfp56-dd-1-1")
    assert (lane["trust-l3"], lane["pfc"], lane["running"]) == ("ignore", "disabled", "true")
    assert not any(k.startswith("egress-rate") for k in lane)
    assert [p["name"] for p in api.get_resource(f"{QOS}/priority-flow-control").get()] == [
        "disabled"]


def test_the_roce_recipe_through_the_api(api: Any, lab: Lab) -> None:
    api.get_resource(f"{QOS}/profile").call("add", {"name": "roce", "dscp": "26",
                                                     "traffic-class": "3"})
    api.get_resource(f"{QOS}/map/ip").call("add", {"dscp": "26", "profile": "roce"})
    api.get_resource(f"{QOS}/priority-flow-control").call(
        "add", {"name": "pfc-tc3", "traffic-class": "3", "rx": "yes", "tx": "yes"})
    port = api.get_resource(f"{QOS}/port")
    port.call("set", {"numbers": "qsfp56-dd-1-1", "trust-l3": "keep", "pfc": "pfc-tc3",
                      "egress-rate-queue3": "100G"})
    row = _one(port.get(), name="qsfp56-dd-1-1")
    assert (row["trust-l3"], row["pfc"], row["egress-rate-queue3"]) == (
        "keep", "pfc-tc3", "100.0Gbps")
    port.call("unset", {"numbers": "qsfp56-dd-1-1", "value-name": "egress-rate-queue3"})
    assert "egress-rate-queue3" not in _one(port.get(), name="qsfp56-dd-1-1")
    lab.backend.calls.clear()
    api.get_resource("/interface/ethernet/switch").call(
        "set", {"numbers": "switch1", "qos-hw-offloading": "yes"})
    assert lab.backend.calls == []  # emulated state only: the kernel has no QoS
    assert _one(api.get_resource(f"{QOS}/map/ip").get())["hw-offloaded"] == "true"
    text = export_terse(StateFile(lab.state_path).load())
    assert "/interface ethernet switch qos map ip add dscp=26 profile=roce" in text
    assert "/interface ethernet switch qos port set qsfp56-dd-1-1 pfc=pfc-tc3 trust-l3=keep" in text
    assert "/interface ethernet switch set switch1 qos-hw-offloading=yes" in text


@pytest.mark.parametrize(("path", "command", "args", "message"), [
    (f"{QOS}/port", "set", {"numbers": "qsfp56-dd-1-1", "egress-rate-queue3": "200G"},
     "failure: max bit rate is 100G"),
    (f"{QOS}/port", "set", {"numbers": "qsfp56-dd-1-1", "trust-l3": "always"},
     "input does not match any value of trust-l3"),
    (f"{QOS}/port", "set", {"numbers": "qsfp56-dd-1-1", "pfc": "nosuch"},
     "input does not match any value of pfc"),
    (f"{QOS}/port", "set", {"numbers": "qsfp56-dd-9-1", "trust-l3": "keep"}, "no such item"),
    (f"{QOS}/settings", "set", {"lossless-traffic-class": "3"}, "unknown parameter"),
    (f"{QOS}/profile", "add", {"name": "x", "automap": "yes"}, "unknown parameter"),
    (f"{QOS}/profile", "add", {"dscp": "26"}, "missing value(s) of argument(s) name"),
    (f"{QOS}/profile", "remove", {"numbers": "default"},
     "failure: cannot remove a built-in profile"),
    (f"{QOS}/priority-flow-control", "set", {"numbers": "disabled", "rx": "yes"},
     "failure: cannot change the built-in profile"),
    (f"{QOS}/tx-manager/queue", "set", {"numbers": "*5", "schedule": "fifo"},
     "input does not match any value of schedule"),
])
def test_bad_values_and_what_7_19_lacks(api: Any, path: str, command: str,
                                        args: dict[str, str], message: str) -> None:
    assert trap(api, path, command, args) == message


def test_a_profile_in_use_cannot_go(api: Any) -> None:
    api.get_resource(f"{QOS}/profile").call("add", {"name": "roce", "traffic-class": "3"})
    api.get_resource(f"{QOS}/map/ip").call("add", {"dscp": "26", "profile": "roce"})
    assert trap(api, f"{QOS}/profile", "remove", {"numbers": "roce"}) == (
        "failure: profile roce is in use")


def test_below_7_15_the_pfc_menus_do_not_exist(lab: Lab, raw: RawClient, api: Any) -> None:
    set_version(lab, "7.12.1 (stable)")
    raw.login()
    assert raw.talk(f"{QOS}/priority-flow-control/print") == [
        ["!trap", "=category=0",
         "=message=no such command or directory (priority-flow-control)"],
        ["!trap", "=message=no such command prefix"],
        ["!done"],
    ]
    assert trap(api, f"{QOS}/tx-manager/queue", "print", {}) == "no such command prefix"
    assert trap(api, "/interface/ethernet/switch", "set",
                {"numbers": "switch1", "qos-hw-offloading": "yes"}) == "unknown parameter"
    assert trap(api, f"{QOS}/port", "set", {"numbers": "qsfp56-dd-1-1", "pfc": "disabled"}) == (
        "unknown parameter")
    # QoS marking (profiles, DSCP map, port trust) is older: 7.10
    assert "pfc" not in _one(api.get_resource(f"{QOS}/port").get(), name="qsfp56-dd-1-1")
    set_version(lab, "7.9 (stable)")
    assert trap(api, f"{QOS}/profile", "print", {}) == "no such command prefix"


def test_7_23_has_lossless_traffic_classes_and_automap(lab: Lab, api: Any) -> None:
    set_version(lab, "7.23 (stable)")
    settings = api.get_resource(f"{QOS}/settings")
    assert settings.get()[0]["lossless-traffic-class"] == "auto"
    settings.call("set", {"lossless-traffic-class": "3"})
    assert settings.get()[0]["lossless-traffic-class"] == "3"
    api.get_resource(f"{QOS}/profile").call("add", {"name": "roce", "dscp": "26",
                                                     "traffic-class": "3"})
    assert _one(api.get_resource(f"{QOS}/profile").get(), name="roce")["automap"] == "true"


def test_the_console_runs_the_same_menus(lab: Lab) -> None:
    cli = Cli(lab.device)
    assert cli.execute("/interface ethernet switch qos port set qsfp56-dd-1-1 trust-l3=keep") == ""
    assert "trust-l3=keep" in cli.execute(
        "/interface/ethernet/switch/qos/port print where name=qsfp56-dd-1-1")
    assert cli.execute("/interface ethernet switch qos tx-manager queue set 3 ecn=yes") == ""
    assert "ecn=yes" in cli.execute("/interface ethernet switch qos tx-manager queue print "
                                    "where traffic-class=3")
    set_version(lab, "7.12.1")
    assert cli.execute("/interface ethernet switch qos priority-flow-control print").startswith(
        "bad command name priority-flow-control")


# --- push's calls against the emulator ----------------------------------------------------


def lossless_intent(tmp_path: Any) -> Any:
    from tests.push.helpers import INVENTORY, RECORDED

    text = (RECORDED / "star4-lab.yaml").read_text().replace("mtu: 9000\n",
                                                             "mtu: 9000\nqos: lossless\n", 1)
    path = tmp_path / "star4-lossless-lab.yaml"
    path.write_text(text)
    return load_intent(path, INVENTORY)


def read_rows(api: Any) -> dict[str, list[dict[str, str]]]:
    rows = {path: ros_rows(api, path) for path in QOS_PATHS}
    rows["/ip/neighbor/discovery-settings"] = ros_rows(api, "/ip/neighbor/discovery-settings")
    return rows


def apply(api: Any, calls: list[ApiCall]) -> None:
    for call in calls:
        args = call.args()
        if call.action == "set" and call.target is not None:
            args = {"numbers": call.target, **args}
        ros_call(api, call.path, call.action, args)


@pytest.mark.parametrize("version", ["7.15", "7.19.4 (stable)", "7.23 (stable)"])
def test_push_converges_and_rollback_restores(make_lab: MakeLab, tmp_path: Any,
                                              version: str) -> None:
    lab = make_lab()
    set_version(lab, version)
    intent = lossless_intent(tmp_path)
    lanes = ["qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-3-1", "qsfp56-dd-4-1"]
    pool = connect(lab)
    api = pool.get_api()
    try:
        before = read_rows(api)
        exported = export_terse(StateFile(lab.state_path).load(), now=0)
        calls = switch_qos_calls(intent, version, before, lanes)
        assert any(c.path.endswith("/map/ip") for c in calls) == (version != "7.23 (stable)")
        assert any(c.path.endswith("/settings") for c in calls) == (version == "7.23 (stable)")
        apply(api, calls)
        after = read_rows(api)
        assert switch_qos_calls(intent, version, after, lanes) == []  # a second push: nothing
        fact = switch_qos_fact(after, version, after["/ip/neighbor/discovery-settings"][0])
        assert fact.offloaded and fact.lldp_dcbx and fact.traffic_class_of(26) == 3
        assert fact.traffic_class_of(48) == 6 and 6 in fact.strict_classes
        assert fact.ecn_classes == (3,)
        assert fact.ports["qsfp56-dd-1-1"].pfc_classes == (3,)
        assert fact.ports["qsfp56-dd-1-1"].trust_l3 == "keep"
        assert fact.lossless_classes == ((3,) if version == "7.23 (stable)" else ())
        done: list[str] = []

        def call(path: str, action: str, args: dict[str, str]) -> None:
            ros_call(api, path, action, args)
            done.append(f"{path} {action}")

        backup = SwitchSnapshot("crs804", before)
        restore_qos(api, backup, tuple(lanes), call)
        disc = "/ip/neighbor/discovery-settings"  # (restore_switch_backup's own step)
        call(disc, "set", {"lldp-dcbx": before[disc][0]["lldp-dcbx"]})
        assert export_terse(StateFile(lab.state_path).load(), now=0) == exported
        assert done and all(not p.endswith("ethernet") for p in done)
    finally:
        pool.disconnect()


def test_a_state_from_before_qos_loads_with_the_factory_qos(lab: Lab) -> None:
    import json

    from fabric.lab.routeros.state import from_json

    data = json.loads(lab.state_path.read_text())
    for key in ("qos", "switch"):
        data.pop(key)
    state = from_json(data)
    assert len(state.qos.ports) == 34 and state.switch.name == "switch1"
    assert [p.name for p in state.qos.profiles] == ["default"]
