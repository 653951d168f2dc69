"""Lossless RoCE (topology `qos: lossless`): both ends of each cable or neither, the switch
QoS by RouterOS version, the Sparks' mlnx_qos / ECN / RDMA CM ToS, persisted files, rollback;
`qos: lossy` pushes no QoS at all. Also the lab's mlnx_qos stand-in."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fabric.devices.crs804.diff import diff_switch
from fabric.devices.crs804.platform import QOS_PATHS
from fabric.devices.crs804.render import render_routeros
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.devices.spark.apply_spark_config import apply_steps
from fabric.devices.spark.diff import diff_spark
from fabric.devices.spark.platform import QOS_RULES_PATH, QOS_SCRIPT_PATH
from fabric.devices.spark.render import render_qos_rules, render_qos_script
from fabric.devices.spark.restore_spark_backup import restore_steps
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.lab.host import mlnx_qos_shim
from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.menus import MENUS
from fabric.lab.routeros.menus.base import Request
from fabric.lab.routeros.state import StateFile, write_initial_state
from fabric.parsers import parse
from fabric.push.diff import diff_push

from .helpers import INVENTORY, RECORDED, lab_intent, recorded
from .test_render import _golden

HOSTS = ["crs804", "spark01", "spark02", "spark03", "spark04"]
TWINS = ("enp1s0f0np0", "enP2p1s0f0np0")
LANES = ("qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-3-1", "qsfp56-dd-4-1")
MLNX = "mlnx_qos -i {} --trust dscp --pfc 0,0,0,1,0,0,0,0"


def lossless(tmp_path: Path) -> Intent:
    text = (RECORDED / "star4-lab.yaml").read_text()
    path = tmp_path / "star4-lossless-lab.yaml"
    path.write_text(text.replace("mtu: 9000\n", "mtu: 9000\nqos: lossless\n", 1))
    return load_intent(path, INVENTORY)


def nic(trust: str = "pcp", pfc: tuple[int, ...] = (), moved: bool = False) -> str:
    """`mlnx_qos -i` text of a twin (the lab stand-in's report, which parses like NVIDIA's)."""
    state = copy.deepcopy(mlnx_qos_shim.DEFAULT)
    state["trust"], state["pfc"] = trust, [1 if p in pfc else 0 for p in range(8)]
    if moved:
        state["dscp2prio"]["26"] = 0
    return mlnx_qos_shim.report(state)


def with_nics(snaps: dict[str, SparkSnapshot], text: str, **more: object
              ) -> dict[str, SparkSnapshot]:
    return {h: replace(s, has_mlnx_qos=True, qos={t: text for t in TWINS}, **more)  # type: ignore[arg-type]
            for h, s in snaps.items()}


def emulator_rows(tmp_path: Path, version: str) -> dict[str, list[dict[str, str]]]:
    """What a factory CRS804 at `version` prints in the QoS menus (the lab emulator)."""
    path = tmp_path / "crs804.json"
    write_initial_state(path, "crs804", {}, "admin", "x", version)
    dev = Device(StateFile(path), FakeBackend({}))
    return {p: [{("id" if k == ".id" else k): v for k, v in row.items()}
                for row in MENUS[p].commands["print"](dev, Request(p, "print")).rows]
            for p in QOS_PATHS}


def switch_snap(tmp_path: Path, version: str = "7.19.4 (stable)") -> SwitchSnapshot:
    _, _, snap = recorded("fresh")
    return replace(snap, rows={**snap.rows, **emulator_rows(tmp_path, version)})


def test_dry_run_plans_both_ends(tmp_path: Path) -> None:
    facts, sparks, _ = recorded("fresh")
    changeset = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()),
                          switch_snap(tmp_path), HOSTS)
    sp = changeset.sparks["spark01"]
    assert sp.refused is None
    assert [c for c in sp.commands if c.startswith("mlnx_qos")] == [MLNX.format(t) for t in TWINS]
    assert {QOS_SCRIPT_PATH, QOS_RULES_PATH} <= {f.path for f in sp.changed_files}
    assert sp.file(QOS_SCRIPT_PATH).mode == "755"
    assert any("RoCE ECN in sysfs" in n for n in sp.notes)  # the lab's macvlans have none
    assert changeset.switch is not None and changeset.switch.refused is None
    calls = [str(c) for c in changeset.switch.calls]
    q = "/interface/ethernet/switch/qos"
    assert f"{q}/profile add name=roce dscp=26 traffic-class=3" in calls
    assert f"{q}/profile add name=cnp dscp=48 traffic-class=6" in calls
    assert f"{q}/map/ip add dscp=26 profile=roce" in calls
    assert f"{q}/priority-flow-control add name=pfc-tc3 traffic-class=3 rx=yes tx=yes" in calls
    assert any(c.startswith(f"{q}/tx-manager/queue set") and "ecn: no -> yes" in c
               for c in calls)
    for lane in LANES:
        assert (f"{q}/port set {lane} trust-l3: ignore -> keep, pfc: disabled -> pfc-tc3, "
                "egress-rate-queue3: - -> 0") in calls
    assert calls[-2:] == ["/interface/ethernet/switch set switch1 qos-hw-offloading: no -> yes",
                          "/ip/neighbor/discovery-settings set lldp-dcbx: no -> yes"]


def test_a_spark_without_mlnx_qos_is_refused_and_its_lane_left_lossy(tmp_path: Path) -> None:
    facts, sparks, _ = recorded("fresh")
    nics = with_nics(sparks, nic())
    nics["spark03"] = sparks["spark03"]  # no mlnx_qos there
    changeset = diff_push(lossless(tmp_path), facts, nics, switch_snap(tmp_path), HOSTS)
    assert "needs mlnx_qos" in (changeset.sparks["spark03"].refused or "")
    assert changeset.refused.keys() == {"spark03"}
    assert changeset.switch is not None
    ports = [c.target for c in changeset.switch.calls if c.path.endswith("/qos/port")]
    assert ports == ["qsfp56-dd-1-1", "qsfp56-dd-2-1", "qsfp56-dd-4-1"]
    assert any("port QoS left as it is on qsfp56-dd-3-1 (spark03)" in n
               for n in changeset.switch.notes)


@pytest.mark.parametrize(("version", "menus"), [
    ("7.15", {"profile", "map/ip", "tx-manager/queue", "priority-flow-control", "port"}),
    ("7.22.1 (stable)", {"profile", "map/ip", "tx-manager/queue", "priority-flow-control",
                         "port"}),
    ("7.23 (stable)", {"profile", "settings", "tx-manager/queue", "priority-flow-control",
                       "port"}),
])
def test_switch_menus_by_version(tmp_path: Path, version: str, menus: set[str]) -> None:
    facts, _, _ = recorded("fresh")
    assert facts.switch is not None
    changeset = diff_switch(lossless(tmp_path), replace(facts.switch, version=version),
                       switch_snap(tmp_path, version))
    used = {c.path.removeprefix("/interface/ethernet/switch/qos/") for c in changeset.calls
            if "/switch/qos/" in c.path}
    assert used == menus
    automap = [a for c in changeset.calls for a in c.attrs if a.key == "automap"]
    assert bool(automap) == version.startswith("7.23")


def test_below_7_15_nothing_is_changed_anywhere(tmp_path: Path) -> None:
    facts, sparks, snap = recorded("fresh")
    assert facts.switch is not None
    facts = replace(facts, switch=replace(facts.switch, version="7.12.1 (stable)"))
    changeset = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()), snap, HOSTS)
    assert changeset.switch is not None and changeset.switch.refused is not None
    assert "needs RouterOS 7.15 or newer" in changeset.switch.refused
    refused = changeset.switch.refused
    assert "7.12.1 (stable)" in refused and "qos: lossy" in refused
    assert changeset.hosts_with_changes() == []


def test_unreadable_qos_menus_refuse(tmp_path: Path) -> None:
    facts, _, snap = recorded("fresh")
    assert facts.switch is not None
    snap = replace(snap, qos_error="/interface/ethernet/switch/qos/port: no such command prefix")
    changeset = diff_switch(lossless(tmp_path), facts.switch, snap)
    assert changeset.refused is not None and "could not be read" in changeset.refused


def test_lossy_pushes_no_qos_to_hosts(tmp_path: Path) -> None:
    facts, sparks, snap = recorded("fresh")
    changeset = diff_push(lab_intent(), facts, with_nics(sparks, nic()), snap, HOSTS)
    for sp in changeset.sparks.values():
        assert not any("mlnx_qos" in c or "cma_roce_tos" in c for c in sp.commands)
        assert {f.path for f in sp.files} == {"/etc/netplan/40-fabric.yaml",
                                             "/etc/sysctl.d/40-fabric.conf",
                                             "/etc/systemd/logind.conf.d/40-fabric.conf"}


def test_lossy_notes_qos_files_left_by_a_lossless_push(tmp_path: Path) -> None:
    facts, sparks, _ = recorded("configured")
    snap = replace(sparks["spark01"], files={**sparks["spark01"].files, QOS_SCRIPT_PATH: "x"})
    changeset = diff_spark(lab_intent(), facts.sparks["spark01"], snap)
    assert changeset.changes == 0
    assert any("from a lossless push are still here" in n for n in changeset.notes)


def test_ecn_rdma_cm_tos_and_dscp_map(tmp_path: Path) -> None:
    facts, sparks, _ = recorded("configured")
    intent = lossless(tmp_path)
    snap = replace(sparks["spark01"], has_mlnx_qos=True, has_cma_roce_tos=True,
                   qos={"enp1s0f0np0": nic("dscp", (3,), moved=True),
                        "enP2p1s0f0np0": nic("dscp", (3,))},
                   ecn={"enp1s0f0np0": {"np": "0", "rp": "1"},
                        "enP2p1s0f0np0": {"np": "1", "rp": "1"}},
                   rdma_present=["rocep1s0f0", "roceP2p1s0f0"],
                   roce_tos={"rocep1s0f0": "0", "roceP2p1s0f0": "106"})
    changeset = diff_spark(intent, facts.sparks["spark01"], snap)
    qos = [c for c in changeset.commands if not c.startswith(("ip ", "sysctl"))]
    assert qos == ["mlnx_qos -i enp1s0f0np0 --dscp2prio set,26,3",
                   "echo 1 > /sys/class/net/enp1s0f0np0/ecn/roce_np/enable/3",
                   "cma_roce_tos -d rocep1s0f0 -t 106"]
    assert changeset.touched == ("enp1s0f0np0",)
    done = replace(snap, qos={t: nic("dscp", (3,)) for t in TWINS},
                   ecn={t: {"np": "1", "rp": "1"} for t in TWINS},
                   roce_tos={"rocep1s0f0": "106", "roceP2p1s0f0": "106"},
                   files={**snap.files, QOS_SCRIPT_PATH: render_qos_script(intent, "spark01"),
                          QOS_RULES_PATH: render_qos_rules(intent, "spark01")})
    assert diff_spark(intent, facts.sparks["spark01"], done).changes == 0


def test_files_before_runtime_and_rollback_puts_qos_back(tmp_path: Path) -> None:
    facts, sparks, _ = recorded("configured")
    snap = replace(sparks["spark01"], has_mlnx_qos=True, has_cma_roce_tos=True,
                   qos={t: nic() for t in TWINS}, ecn={t: {"np": "0", "rp": "0"} for t in TWINS},
                   rdma_present=["rocep1s0f0"], roce_tos={"rocep1s0f0": "0"})
    changeset = diff_spark(lossless(tmp_path), facts.sparks["spark01"], snap)
    labels, _ = apply_steps(changeset, has_netplan=True)
    assert labels[:2] == [f"write {QOS_SCRIPT_PATH}", f"write {QOS_RULES_PATH}"]
    assert labels.index(MLNX.format("enp1s0f0np0")) > 1
    labels, _ = restore_steps(snap, changeset.touched, tuple(f.path for f in changeset.files),
                              ("rocep1s0f0",))
    assert f"rm -f {QOS_SCRIPT_PATH}" in labels and f"rm -f {QOS_RULES_PATH}" in labels
    assert "mlnx_qos -i enp1s0f0np0 --trust pcp --pfc 0,0,0,0,0,0,0,0" in labels
    assert "echo 0 > /sys/class/net/enp1s0f0np0/ecn/roce_rp/enable/3" in labels
    assert labels[-1] == "cma_roce_tos -d rocep1s0f0 -t 0"


@pytest.mark.parametrize("version", ["7.19.4 (stable)", "7.23 (stable)", "7.12.1 (stable)"])
def test_routeros_golden_lossless(version: str) -> None:
    name = f"star4-lossless-crs804-{version.split()[0]}.rsc"
    _golden(name, render_routeros(load_intent("star4-lossless"), version))


def test_persisted_files_golden() -> None:
    intent = load_intent("star4-lossless")
    _golden("star4-lossless-spark01.roce-qos.sh", render_qos_script(intent, "spark01"))
    _golden("star4-lossless-spark01.roce-qos.rules", render_qos_rules(intent, "spark01"))


def test_script_names_every_twin_and_its_rdma_device() -> None:
    intent = load_intent("star4-lossless")
    script = render_qos_script(intent, "spark03")
    assert "twin enp1s0f0np0 rocep1s0f0\ntwin enP2p1s0f0np0 roceP2p1s0f0\n" in script
    assert "enP7s7" not in script and "enP7s7" not in render_qos_rules(intent, "spark03")


# --- the lab's mlnx_qos stand-in ---------------------------------------------------------


@pytest.fixture
def shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(mlnx_qos_shim, "STATE_DIR", tmp_path / "state")
    return tmp_path / "state"


def test_shim_sets_and_reports_like_mlnx_qos(shim: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    assert mlnx_qos_shim.main(["-i", "lo"]) == 0
    [before] = parse("mlnx_qos", capsys.readouterr().out)
    assert (before.trust, before.pfc_enabled) == ("pcp", ())  # type: ignore[attr-defined]
    assert mlnx_qos_shim.main(["-i", "lo", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"]) == 0
    [after] = parse("mlnx_qos", capsys.readouterr().out)
    assert (after.trust, after.pfc_enabled) == ("dscp", (3,))  # type: ignore[attr-defined]
    assert dict(after.dscp2prio)[3] == (31, 30, 29, 28, 27, 26, 25, 24)  # type: ignore[attr-defined]
    assert (shim / "lo.json").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["-i", "lo", "--pfc", "0,0,0,1"], "pfc list must have 8 items"),
    (["-i", "lo", "--trust", "both"], "Invalid trust state command. Refer to the help."),
    (["-i", "lo", "--trust", "dscp", "--dscp2prio", "set,26,3"],
     "trust and dscp2prio commands cannot be used at the same time."),
    (["--trust", "dscp"], "Interface name is required"),
])
def test_shim_refuses_like_mlnx_qos(shim: Path, capsys: pytest.CaptureFixture[str],
                                    argv: list[str], message: str) -> None:
    assert mlnx_qos_shim.main(argv) == 1
    assert message in capsys.readouterr().out
    assert not shim.exists()


def test_shim_needs_root_and_an_interface(shim: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert mlnx_qos_shim.main(["-i", "nosuch0"]) == 1
    assert "No such device" in capsys.readouterr().err
    monkeypatch.setattr(mlnx_qos_shim.os, "geteuid", lambda: 1000)
    assert mlnx_qos_shim.main(["-i", "lo"]) == 1
    assert capsys.readouterr().err == "Netlink error: Operation not permitted\n"


def _queue_calls(changeset: Any) -> list[str]:
    return [str(c) for c in changeset.switch.calls if "/tx-manager/queue" in c.path]


def test_a_queue_property_the_switch_lacks_is_not_sent_and_the_plan_says_what_it_costs(
        tmp_path: Path) -> None:
    """A chip whose tx-manager queue rows have no use-shared-buffers (MikroTik's CLI
    reference: prestera-cpss): the lossless push leaves it out and says so; where the rows
    show it, it is sent."""
    facts, sparks, _ = recorded("fresh")
    snap = switch_snap(tmp_path)
    queue = "/interface/ethernet/switch/qos/tx-manager/queue"
    assert all("use-shared-buffers" in r for r in snap.rows[queue])
    off = replace(snap, rows={**snap.rows, queue: [
        {**r, "use-shared-buffers": "false"} if r["traffic-class"] == "3" else r
        for r in snap.rows[queue]]})
    with_it = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()), off, HOSTS)
    assert any("use-shared-buffers: no -> yes" in c for c in _queue_calls(with_it))
    lacking = replace(snap, rows={**snap.rows, queue: [
        {k: v for k, v in r.items() if k != "use-shared-buffers"} for r in off.rows[queue]]})
    without = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()), lacking, HOSTS)
    assert without.switch is not None and without.switch.refused is None
    calls = _queue_calls(without)
    assert calls and not any("use-shared-buffers" in c for c in calls), calls
    assert any("ecn: no -> yes" in c for c in calls)  # the rest of the queue still set
    [note] = [n for n in without.switch.notes if "use-shared-buffers" in n]
    assert "traffic-class=3" in note and "not sent" in note and "no shared buffers" in note


def _udev_matches(rule: str, event: dict[str, str]) -> bool:
    """Whether a udev rule line's `KEY=="a|b"` matches (enough of udev for these rules)."""
    import re as _re

    for key, want in _re.findall(r'([A-Z]+(?:\{\w+\})?)=="([^"]*)"', rule):
        if event.get(key) not in want.split("|"):
            return False
    return True


def test_persisted_qos_follows_a_twin_renamed_after_it_registered() -> None:
    """mlx5 registers `eth3` and `mlx5_0`; udev renames them (a `move` event under the final
    name). After a driver reload or a CX-7 firmware reset only those events carry the fabric
    names: the rules must fire on them, or the twin comes back lossy."""
    rules = [ln for ln in render_qos_rules(load_intent("star4-lossless"), "spark01")
             .splitlines() if ln.startswith("ACTION")]
    events = [{"ACTION": "add", "SUBSYSTEM": "net", "KERNEL": "eth3"},
              {"ACTION": "move", "SUBSYSTEM": "net", "KERNEL": "enp1s0f0np0"},
              {"ACTION": "add", "SUBSYSTEM": "infiniband", "KERNEL": "mlx5_0"},
              {"ACTION": "move", "SUBSYSTEM": "infiniband", "KERNEL": "rocep1s0f0"}]
    fired = [any(_udev_matches(r, e) for r in rules) for e in events]
    assert fired == [False, True, False, True], rules


def test_a_pfc_write_turns_global_pause_off_and_ethtool_shows_and_sets_it(
        shim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lab's NIC: RX/TX pause on at first; any PFC write, even back to all zeros, turns
    it off (mlx5 rewrites the whole PFCC register); `ethtool -A` puts it back."""
    def pause() -> tuple[bool, bool, bool]:
        assert mlnx_qos_shim.ethtool_main(["-a", "lo"]) == 0
        [p] = parse("ethtool_a", capsys.readouterr().out)
        return (p.autoneg, p.rx, p.tx)  # type: ignore[attr-defined]

    assert pause() == (False, True, True)
    assert mlnx_qos_shim.main(["-i", "lo", "--trust", "pcp", "--pfc", "0,0,0,0,0,0,0,0"]) == 0
    capsys.readouterr()
    assert pause() == (False, False, False)
    assert mlnx_qos_shim.ethtool_main(["-A", "lo", "rx", "on", "tx", "on"]) == 0
    assert pause() == (False, True, True)
    assert mlnx_qos_shim.ethtool_main(["-A", "lo", "rx", "maybe"]) == 1


def test_rollback_of_lossless_restores_pause_after_pfc_and_checks_it(tmp_path: Path) -> None:
    """The backup's `ethtool -a` comes back with `ethtool -A` after the mlnx_qos restore (its
    PFC write turned pause off), and the restore check compares it."""
    from fabric.devices.spark.restore_spark_backup import restore_differences

    facts, sparks, _ = recorded("configured")
    on = "Pause parameters for enp1s0f0np0:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\ton\n"
    snap = replace(sparks["spark01"], has_mlnx_qos=True, qos={t: nic() for t in TWINS},
                   pause={"enp1s0f0np0": on})
    changeset = diff_spark(lossless(tmp_path), facts.sparks["spark01"], snap)
    labels, _ = restore_steps(snap, changeset.touched, tuple(f.path for f in changeset.files))
    mlnx = labels.index("mlnx_qos -i enp1s0f0np0 --trust pcp --pfc 0,0,0,0,0,0,0,0")
    assert labels.index("ethtool -A enp1s0f0np0 rx on tx on") > mlnx
    off = replace(snap, pause={"enp1s0f0np0": on.replace("\ton", "\toff")})
    assert "enp1s0f0np0: pause (autoneg, rx, tx) off/off/off after the restore, off/on/on " \
        "before the push" in restore_differences(snap, off, ("enp1s0f0np0",), ())
    assert restore_differences(snap, snap, ("enp1s0f0np0",), ()) == []


def test_the_egress_rate_cap_is_data_per_routeros_version_with_its_evidence() -> None:
    """egress-rate-queue3 on a 200G lane: 0 where the version's cap is 100G (a 7.22.1 field
    report), its line rate where a newer cap allows it; the evidence lives with the data."""
    from fabric.devices.crs804.qos import egress_rate
    from fabric.intent.platforms import switch_model

    model = switch_model("crs804-4ddq-hrm")
    assert model.qos_max_egress_gbps("7.22.1") == 100
    assert all(evidence for _, _, evidence in model.qos_egress_caps)
    assert egress_rate(model, 200, "7.19.4 (stable)") == "0"
    assert egress_rate(model, 100, "7.19.4 (stable)") == "100G"
    newer = replace(model, qos_egress_caps=(*model.qos_egress_caps, ("7.24", 400, "test")))
    assert egress_rate(newer, 200, "7.24.1") == "200G" and egress_rate(newer, 200, "7.23") == "0"


def test_the_recipe_is_checked_against_the_shared_property_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Push plans the lossless recipe against the same property table the emulator enforces
    (platforms.yaml `routeros_properties`): the shipped recipe fits it; a recipe edited to a
    weight RouterOS refuses is refused before anything is sent, naming the property."""
    import fabric.devices.crs804.qos as qos_module
    from fabric.intent import platforms

    facts, sparks, _ = recorded("fresh")
    good = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()), switch_snap(tmp_path),
                     HOSTS)
    assert good.switch is not None and good.switch.refused is None
    assert qos_module.table_refusals(good.switch.calls) == []
    shipped = platforms.roce_qos()
    bad = replace(shipped, queues={**shipped.queues, 3: {**shipped.queues[3], "weight": "300"}})
    monkeypatch.setattr(qos_module, "roce_qos", lambda: bad)
    monkeypatch.setattr("fabric.devices.crs804.diff.roce_qos", lambda: bad)
    refused = diff_push(lossless(tmp_path), facts, with_nics(sparks, nic()),
                        switch_snap(tmp_path), HOSTS)
    assert refused.switch is not None and refused.switch.refused is not None
    assert "weight=300 (wants an integer 1..255)" in refused.switch.refused
    assert "nothing is changed on any host" in refused.switch.refused
