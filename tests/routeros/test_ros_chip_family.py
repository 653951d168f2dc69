"""The switch chip's family decides which properties the QoS menus have (MikroTik's CLI
reference: `use-shared-buffers` and `queue-buffers` of `qos/tx-manager/queue` are absent on
prestera-cpss chips). Which family the CRS804 is, is not settled: the emulator takes it as a
setting (default: the family that has the properties), and the table lives in
fabric/intent/platforms.yaml where push can read it too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fabric.devices.crs804.diff import diff_switch
from fabric.devices.crs804.platform import QOS_PATHS
from fabric.intent.build import load_intent
from fabric.intent.platforms import routeros_properties
from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.menus import MENUS
from fabric.lab.routeros.menus.base import Request
from fabric.lab.routeros.platform import DEFAULT_CHIP_FAMILY
from fabric.lab.routeros.state import StateFile, write_initial_state
from fabric.remote.shell import ros_call

from .conftest import MakeLab, connect
from .helpers import RawClient

QUEUE = "/interface/ethernet/switch/qos/tx-manager/queue"
CPSS, DX = "prestera-cpss", "prestera-dx"
SHARED = ("use-shared-buffers", "queue-buffers")


def queue_rows(raw: RawClient) -> list[dict[str, str]]:
    rows = []
    for sentence in raw.talk(f"{QUEUE}/print"):
        if sentence[0] == "!re":
            rows.append(dict(w[1:].split("=", 1) for w in sentence[1:]))
    return rows


def test_the_default_family_has_the_shared_buffer_properties(make_lab: MakeLab) -> None:
    lab = make_lab()
    assert DEFAULT_CHIP_FAMILY == DX
    raw = RawClient(lab.port)
    raw.login()
    rows = queue_rows(raw)
    assert len(rows) == 8 and all(set(SHARED) <= row.keys() for row in rows)
    assert raw.talk(f"{QUEUE}/set", "=numbers=*5", "=use-shared-buffers=no") == [["!done"]]
    assert queue_rows(raw)[3]["use-shared-buffers"] == "false"
    raw.close()


def test_a_prestera_cpss_chip_has_no_shared_buffer_properties(make_lab: MakeLab) -> None:
    lab = make_lab(chip_family=CPSS)
    raw = RawClient(lab.port)
    raw.login()
    rows = queue_rows(raw)
    assert len(rows) == 8
    assert not any(key in row for row in rows for key in SHARED), rows[0]
    assert {"schedule", "ecn", "wred", "ecn-actual", "wred-actual"} <= rows[3].keys()
    # RouterOS's own refusal of an argument the menu does not have, as for any other one
    for word in ("=use-shared-buffers=yes", "=queue-buffers=10"):
        assert raw.talk(f"{QUEUE}/set", "=numbers=*5", word, ".tag=q") == [
            ["!trap", "=message=unknown parameter", ".tag=q"], ["!done", ".tag=q"]]
    assert raw.talk(f"{QUEUE}/set", "=numbers=*5", "=ecn=yes") == [["!done"]]
    assert queue_rows(raw)[3]["ecn-actual"] == "true"  # no shared-buffer gate on this chip
    # the same menus, in the same version, are otherwise unchanged
    assert raw.talk("/interface/ethernet/switch/qos/settings/print")[0][0] == "!re"
    raw.close()


def test_the_family_is_a_state_setting_checked_against_the_table(tmp_path: Path) -> None:
    assert set(routeros_properties().families) == {DX, CPSS}
    path = tmp_path / "s.json"
    write_initial_state(path, "crs804", {}, "admin", "x", chip_family=CPSS)
    assert StateFile(path).load().chip_family == CPSS
    with pytest.raises(ValueError, match="prestera-xyz"):
        write_initial_state(path, "crs804", {}, "admin", "x", chip_family="prestera-xyz")


def test_the_table_is_what_the_emulator_prints(tmp_path: Path) -> None:
    """Every key a QoS row prints is in the table, for each family and version."""
    table = routeros_properties()
    for family in table.families:
        for version in ("7.12.1", "7.15", "7.19.4 (stable)", "7.23 (stable)"):
            path = tmp_path / f"{family}-{version.split()[0]}.json"
            write_initial_state(path, "crs804", {}, "admin", "x", version, chip_family=family)
            dev = Device(StateFile(path), FakeBackend({}))
            for menu in table.menus:
                if menu not in MENUS or not _available(menu, version):
                    continue
                shown = set(table.shown(menu, family, version))
                for row in MENUS[menu].commands["print"](dev, Request(menu, "print")).rows:
                    assert set(row) - {".id"} <= shown, (menu, family, version)
                    want = {p.name for p in table.menus[menu] if p.present(family, version)
                            and not p.optional}
                    assert want <= set(row), (menu, family, version, want - set(row))


def _available(menu: str, version: str) -> bool:
    from fabric.lab.routeros.menus import available

    return available(MENUS[menu], version)


# --- push's planning against each emulator setup -------------------------------------------


def _lossless(tmp_path: Path) -> Any:
    from tests.push.helpers import INVENTORY, RECORDED

    text = (RECORDED / "star4-lab.yaml").read_text()
    path = tmp_path / "star4-lossless-lab.yaml"
    path.write_text(text.replace("mtu: 9000\n", "mtu: 9000\nqos: lossless\n", 1))
    return load_intent(path, INVENTORY)


def _printed(api: Any) -> dict[str, list[dict[str, str]]]:
    from fabric.remote.shell import ros_rows

    return {p: ros_rows(api, p) for p in (*QOS_PATHS, "/ip/neighbor/discovery-settings")}


@pytest.mark.parametrize("family", [DX, CPSS])
def test_push_plans_against_what_each_chip_prints(make_lab: MakeLab, tmp_path: Path,
                                                  family: str) -> None:
    """`fabric.devices.crs804.diff` reads the queue rows this chip prints: where they show
    use-shared-buffers it is planned, where they do not it is left out and the plan says what
    that costs; the calls it plans go through the emulator without a trap."""
    from tests.push.helpers import recorded

    lab = make_lab(chip_family=family)
    pool = connect(lab)
    api = pool.get_api()
    try:
        if family == DX:  # the factory queue 3 already shares buffers: make push change it
            ros_call(api, QUEUE, "set", {"numbers": "*5", "use-shared-buffers": "no"})
        facts, _, snap = recorded("fresh")
        assert facts.switch is not None
        snap = replace(snap, rows={**snap.rows, **_printed(api)})
        plan = diff_switch(_lossless(tmp_path), replace(facts.switch, version="7.19.4 (stable)"),
                           snap)
        assert plan.refused is None
        queue_calls = [str(c) for c in plan.calls if c.path == QUEUE]
        assert any("ecn: no -> yes" in c for c in queue_calls), queue_calls
        planned = any("use-shared-buffers" in c for c in queue_calls)
        noted = [n for n in plan.notes if "use-shared-buffers" in n and "not sent" in n]
        assert planned == (family == DX) and bool(noted) == (family == CPSS)
        for call in plan.calls:
            if not call.path.startswith(("/interface/ethernet/switch", "/ip/neighbor/")):
                continue  # lanes and bridge ports: the recorded lab's, not this emulator's
            args = call.args()
            if call.action == "set" and call.target is not None:
                args = {"numbers": call.target, **args}
            ros_call(api, call.path, call.action, args)
        again = replace(snap, rows={**snap.rows, **_printed(api)})
        replan = diff_switch(_lossless(tmp_path), replace(facts.switch,
                                                          version="7.19.4 (stable)"), again)
        assert [c for c in replan.calls if "/qos/" in c.path] == []
    finally:
        pool.disconnect()
