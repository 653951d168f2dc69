"""The emulator's CRS804 (fabric/lab/routeros/platform.py) and the intent's platform data
(fabric/intent/platforms.yaml) describe the same switch; they must not drift apart."""

from __future__ import annotations

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
