"""The emulator's CRS804 (fabric/lab/routeros/platform.py) and the intent's platform data
(fabric/intent/platforms.yaml) describe the same switch; they must not drift apart."""

from __future__ import annotations

from pathlib import Path

from fabric.intent.platforms import switch_model
from fabric.lab.routeros import platform as emulated


def test_emulator_and_intent_agree_on_the_crs804() -> None:
    model = switch_model("crs804-4ddq-hrm")
    board = emulated.Platform()
    assert (model.ports, model.lanes_per_port) == (emulated.PORTS, emulated.LANES_PER_PORT)
    assert tuple(model.all_lanes()) == emulated.LANE_NAMES
    assert model.max_l2mtu == board.max_l2mtu
    assert model.default_l2mtu == board.default_l2mtu
    for mode in model.modes.values():
        assert emulated.LINK_MODES[mode.speed] == mode.gbps, mode.name
        assert mode.auto_negotiation == (mode.gbps >= emulated.AUTONEG_OK_GBPS), mode.name
    assert model.fec_mode == "fec91" and emulated.FEC91_MIN_GBPS <= 200


def test_the_emulated_chip_family_is_one_the_property_table_knows() -> None:
    """The QoS menus' properties by chip family are data push and the emulator share
    (platforms.yaml `routeros_properties`); the emulator's default family is one of them."""
    from fabric.intent.platforms import routeros_properties
    from fabric.lab.routeros.menus import MENUS

    table = routeros_properties()
    assert emulated.DEFAULT_CHIP_FAMILY in table.families
    assert set(table.menus) <= set(MENUS), set(table.menus) - set(MENUS)


def test_menu_tables_agree(tmp_path: Path) -> None:
    """Every menu prints (exporters read them all), sits in a directory the API knows, and
    every console view shows properties its menu prints."""
    from fabric.lab.routeros.backend import FakeBackend
    from fabric.lab.routeros.cli import VIEWS
    from fabric.lab.routeros.device import Device
    from fabric.lab.routeros.menus import MENUS, directories
    from fabric.lab.routeros.menus.base import Request
    from fabric.lab.routeros.state import FACTORY, StateFile, write_initial_state

    assert set(VIEWS) <= set(MENUS), set(VIEWS) - set(MENUS)
    dirs = directories()
    for path, menu in MENUS.items():
        assert "print" in menu.commands, path
        assert path.rsplit("/", 1)[0] in dirs, path
    state = tmp_path / "s.json"
    write_initial_state(state, "crs804", {"qsfp56-dd-1-1": 200}, "admin", "x", config=FACTORY,
                        mgmt_address="198.18.3.10/24")
    dev = Device(StateFile(state), FakeBackend({"qsfp56-dd-1-1": 1500, "ether1": 1500}))
    dev.reconcile()
    dev.active_users.login("admin", "198.18.3.1", "api", 0.0)
    for path, view in VIEWS.items():
        rows = MENUS[path].commands["print"](dev, Request(path, "print")).rows
        if not rows:
            continue
        printed = {key for row in rows for key in row}
        wanted = {*view.columns, *(key for _, key in view.flags)}
        assert wanted <= printed, (path, wanted - printed)


def test_the_board_has_the_switch_package_and_health_the_exporters_read() -> None:
    """DOMAIN.md: the switch-marvell package is required on the CRS804; /system/health rows
    carry the names mktxp's health collector reads (temperatures, fans, PSU state)."""
    board = emulated.Platform()
    assert [name for name, _ in board.packages] == ["routeros", "switch-marvell"]
    names = {name for name, _, _ in board.health}
    assert {"cpu-temperature", "switch-temperature", "fan1-speed", "psu1-state",
            "psu2-state"} <= names
    assert {kind for _, _, kind in board.health} <= {"C", "RPM", "V", ""}
