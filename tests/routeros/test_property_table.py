"""The QoS menus' property table (platforms.yaml `routeros_properties`) and the emulator agree:
a property's `default` is what a fresh item prints, and the arguments set/add take are the
table's settable properties (a read-only one is `unknown parameter`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.intent.platforms import PROPERTY_TYPES, routeros_properties
from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.errors import Trap
from fabric.lab.routeros.menus import MENUS
from fabric.lab.routeros.menus.base import Request
from fabric.lab.routeros.state import FACTORY, StateFile, write_initial_state

QOS = "/interface/ethernet/switch/qos"
#: items added here, by menu: only these and the menus' factory items are judged (a built-in
#: item, such as the `default` profile, differs on purpose)
ADDED = {
    f"{QOS}/profile": {"name": "fresh"},
    f"{QOS}/priority-flow-control": {"name": "fresh", "traffic-class": "3"},
    f"{QOS}/map/ip": {"dscp": "1", "profile": "default"},
}


def _device(tmp_path: Path, family: str) -> Device:
    path = tmp_path / f"{family}.json"
    write_initial_state(path, "crs804", {"qsfp56-dd-1-1": 200}, "admin", "x", config=FACTORY,
                        chip_family=family, version="7.23")
    dev = Device(StateFile(path), FakeBackend({"qsfp56-dd-1-1": 1500, "ether1": 1500}))
    dev.reconcile()
    return dev


@pytest.mark.parametrize("family", sorted(routeros_properties().families))
def test_defaults_are_what_fresh_items_print(tmp_path: Path, family: str) -> None:
    dev = _device(tmp_path, family)
    table = routeros_properties()
    for menu, props in table.menus.items():
        added = None
        if menu in ADDED:
            added = MENUS[menu].commands["add"](dev, Request(menu, "add", ADDED[menu])).ret
        rows = MENUS[menu].commands["print"](dev, Request(menu, "print")).rows
        fresh = [r for r in rows if added is None or r.get(".id") == added]
        assert fresh, menu
        for prop in props:
            if prop.default is None:
                continue
            for row in fresh:
                if prop.name in row:
                    assert row[prop.name] == prop.default, (menu, prop.name, row)


def test_types_are_known_and_read_only_properties_are_refused(tmp_path: Path) -> None:
    dev = _device(tmp_path, "prestera-dx")
    table = routeros_properties()
    for menu, props in table.menus.items():
        for prop in props:
            assert prop.read_only or prop.type in PROPERTY_TYPES, (menu, prop.name)
            assert (prop.range is not None) == (prop.type == "int"), (menu, prop.name)
            assert bool(prop.choices) == (prop.type == "choice"), (menu, prop.name)
            assert bool(prop.ref) == (prop.type == "ref"), (menu, prop.name)
        if "set" not in MENUS[menu].commands:
            continue
        for prop in props:
            if not prop.read_only:
                continue
            args = {"numbers": "*0", prop.name: "x"} if menu != f"{QOS}/settings" else {
                prop.name: "x"}
            with pytest.raises(Trap, match="unknown parameter"):
                MENUS[menu].commands["set"](dev, Request(menu, "set", args))
