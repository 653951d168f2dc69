"""One suite every device passes (`fabric.devices.contract.Device`): the Spark, the CRS804 and
the CRS812, each against recorded sessions (the lab star4's facts and snapshots, fresh and
after `push --apply`; the CRS812's derived from the CRS804's on its two modelled ports), and the
switches' whole cycle against the in-process RouterOS emulator (a CRS804: the CRS812 runs on
its first two ports, which is all the CRS812's model data has)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.credentials import Credentials
from fabric.devices.contract import Device, PushScope
from fabric.devices.crs804.device import Crs804
from fabric.devices.crs812.device import Crs812
from fabric.devices.crs812.platform import MODEL as CRS812
from fabric.devices.crs812.platform import lanes
from fabric.devices.registry import SPARK, SWITCHES, switch_device
from fabric.devices.spark.device import Spark
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.push.runner import run_task
from fabric.remote.exec import SPARK_SSH
from fabric.remote.nornir_setup import make_nornir
from fabric.target import Target
from tests.collect.helpers import fixture
from tests.collect.test_collect import FakeNetmiko
from tests.push.helpers import INVENTORY, RECORDED, lab_intent, recorded
from tests.remote.conftest import PASSWORD, USER, Emulator, emulator, write_inventory

__all__ = ["emulator"]

#: The contract's steps (the Protocol's methods).
STEPS = ("get_facts", "get_snapshot", "compare", "commit", "links_down", "verify",
         "backup_entry", "rollback")


def crs812_files(tmp: Path, switch_host: str = "crs812") -> tuple[Path, Path]:
    """A two-Spark star on a CRS812 (its two QSFP56-DD ports) and an inventory naming it."""
    topo = yaml.safe_load((RECORDED / "star4-lab.yaml").read_text())
    topo["name"] = "star2-crs812"
    topo["switch"]["host"] = switch_host
    topo["switch"]["ports"] = {"qsfp56-dd-1": "1x200G", "qsfp56-dd-2": "1x200G"}
    topo["links"] = [{**link, "b": link["b"].replace("crs804:", f"{switch_host}:")}
                     for link in topo["links"][:2]]
    (tmp / "star2-crs812.yaml").write_text(yaml.safe_dump(topo))
    inv = tmp / "inv"
    inv.mkdir(exist_ok=True)
    for name in ("groups.yaml", "defaults.yaml"):
        (inv / name).write_text((INVENTORY / name).read_text())
    hosts = yaml.safe_load((INVENTORY / "hosts.yaml").read_text())
    hosts[switch_host] = {"hostname": f"{switch_host}.mgmt.studio.lan", "groups": ["switches"],
                          "data": {"status": "in-service", "model": CRS812}}
    (inv / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return tmp / "star2-crs812.yaml", inv


def _crs812_recorded(state: str) -> tuple[Any, Any]:
    """The CRS804's recorded switch, narrowed to the CRS812's lanes and named crs812."""
    facts, _, snap = recorded(state)
    assert facts.switch is not None
    mine = set(lanes())
    sw = dataclasses.replace(facts.switch, host="crs812",
                             lanes={k: v for k, v in facts.switch.lanes.items() if k in mine})
    rows = {path: [r for r in found if path != "/interface/ethernet" or r.get("name") in mine]
            for path, found in snap.rows.items()}
    return sw, dataclasses.replace(snap, host="crs812", rows=rows)


@dataclass(frozen=True)
class Case:
    name: str
    device: Device[Any, Any, Any]
    host: str
    intent: Callable[[Path], Intent]
    state: Callable[[str], tuple[Any, Any]]  # "fresh" | "configured" -> (facts, snapshot)


def _spark_state(state: str) -> tuple[Any, Any]:
    facts, sparks, _ = recorded(state)
    return facts.sparks["spark01"], sparks["spark01"]


def _switch_state(state: str) -> tuple[Any, Any]:
    facts, _, snap = recorded(state)
    return facts.switch, snap


CASES = [
    Case("spark", SPARK, "spark01", lambda _tmp: lab_intent(), _spark_state),
    Case("crs804", switch_device("crs804-4ddq-hrm"), "crs804", lambda _tmp: lab_intent(),
         _switch_state),
    Case("crs812", switch_device(CRS812), "crs812",
         lambda tmp: load_intent(*crs812_files(tmp)), _crs812_recorded),
]
SWITCH_CASES = [c for c in CASES if c.device.role == "switch"]


class DryRunTask:
    """Enough of a Nornir Task for a dry run: a host with no connection."""

    @dataclass
    class Host:
        name: str

    def __init__(self, host: str) -> None:
        self.host = DryRunTask.Host(host)

    def is_dry_run(self) -> bool:
        return True


def _scope(intent: Intent) -> PushScope:
    return PushScope(frozenset(intent.cabled))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_device_offers_every_step_and_the_registry_picks_it(case: Case,
                                                               tmp_path: Path) -> None:
    assert all(callable(getattr(case.device, step)) for step in STEPS)
    intent = case.intent(tmp_path)
    role = intent.hosts[case.host].role
    assert case.device.role == role
    if role == "spark":
        assert case.device is SPARK and case.device.platform == "spark"
    else:
        assert intent.switch is not None and intent.switch.host == case.host
        assert switch_device(intent.switch.model) is case.device
        assert case.device.platform == intent.switch.model


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_fresh_device_plans_changes_a_configured_one_none(case: Case, tmp_path: Path) -> None:
    intent = case.intent(tmp_path)
    fresh = case.device.compare(intent, *case.state("fresh"), _scope(intent))
    assert fresh.host == case.host and fresh.changes > 0 and fresh.refused is None
    done = case.device.compare(intent, *case.state("configured"), _scope(intent))
    assert done.changes == 0 and done.refused is None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compare_is_pure(case: Case, tmp_path: Path) -> None:
    intent = case.intent(tmp_path)
    facts, snap = case.state("fresh")
    before = (facts, snap)
    first = case.device.compare(intent, facts, snap, _scope(intent))
    assert case.device.compare(intent, facts, snap, _scope(intent)) == first
    assert (facts, snap) == before


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_dry_run_commit_reports_the_plan_and_sends_nothing(case: Case,
                                                             tmp_path: Path) -> None:
    intent = case.intent(tmp_path)
    facts, snap = case.state("fresh")
    changes = case.device.compare(intent, facts, snap, _scope(intent))
    result = case.device.commit(DryRunTask(case.host), changes, snap)  # type: ignore[arg-type]
    assert result.changed == (changes.changes > 0) and result.result


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_backup_entry_is_json_with_the_role(case: Case, tmp_path: Path) -> None:
    intent = case.intent(tmp_path)
    facts, snap = case.state("fresh")
    entry = case.device.backup_entry(intent, case.device.compare(intent, facts, snap,
                                                                 _scope(intent)))
    assert json.loads(json.dumps(entry)) == entry and entry["role"] == case.device.role


def test_every_switch_model_has_a_device_and_the_crs812_reuses_the_crs804() -> None:
    from fabric.intent.platforms import switch_models

    assert sorted(SWITCHES) == switch_models()
    assert isinstance(SWITCHES[CRS812], Crs812) and isinstance(SWITCHES[CRS812], Crs804)
    assert isinstance(SPARK, Spark)
    assert lanes()[0] == "qsfp56-dd-1-1" and lanes()[-1] == "qsfp56-dd-2-8"


# --- against live sessions: the Spark's recorded transcript, the switches' emulator ----------


def _switch_target(tmp_path: Path, emulator: Emulator, name: str) -> Target:
    creds = Credentials(ssh_user="root", known_hosts=tmp_path / "known_hosts",
                        routeros_user=USER, routeros_password=PASSWORD,
                        routeros_port=emulator.port)
    if name == "crs804":
        return Target(load_intent("star4", None), write_inventory(tmp_path / "inv"), creds)
    topo, inv = crs812_files(tmp_path)
    hosts = yaml.safe_load((inv / "hosts.yaml").read_text())
    for host in hosts.values():
        host["hostname"] = "127.0.0.1"
    (inv / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    return Target(load_intent(topo, inv), inv, creds)


def _one(target: Target, host: str, task: Callable[..., Any], **kwargs: Any) -> Any:
    got, errors = run_task(target, [host], task, 1, lambda _h: kwargs)
    assert errors == {}, errors
    return got[host]


def test_the_spark_gets_its_facts_from_a_recorded_session(tmp_path: Path) -> None:
    target = Target(load_intent("star4", None), write_inventory(tmp_path / "inv"),
                    Credentials(ssh_user="root", known_hosts=tmp_path / "known_hosts"))
    nr = make_nornir(target, ["spark01"])
    nr.inventory.hosts["spark01"].connections[SPARK_SSH] = FakeNetmiko(
        fixture("lab_star4_spark01.transcript"))
    got, errors = run_task(target, ["spark01"], SPARK.get_facts, 1,
                           lambda _h: {"intent": target.intent}, nornir=nr)
    assert errors == {} and got["spark01"].host == "spark01"
    assert set(got["spark01"].netdevs) >= {i.netdev for i in target.intent.interfaces("spark01")}


@pytest.mark.parametrize("case", SWITCH_CASES, ids=lambda c: c.name)
def test_the_switch_cycle_on_the_emulator(case: Case, tmp_path: Path,
                                          emulator: Emulator) -> None:
    """Getters, plan, commit, plan again (nothing left), verify, roll back (the plan again)."""
    target = _switch_target(tmp_path, emulator, case.name)
    intent, dev = target.intent, case.device
    assert intent.switch is not None and switch_device(intent.switch.model) is dev
    host = intent.switch.host

    def plan() -> Any:
        facts = _one(target, host, dev.get_facts, intent=intent)
        snap = _one(target, host, dev.get_snapshot, intent=intent)
        return dev.compare(intent, facts, snap, _scope(intent)), snap

    changes, backup = plan()
    assert changes.changes > 0 and changes.refused is None, changes.refused
    assert _one(target, host, dev.commit, changes=changes, snap=backup)
    after, _ = plan()
    assert after.changes == 0, [str(c) for c in after.calls]
    cabled = tuple(lp.name for lp in intent.switch.lanes if lp.cabled_to)
    assert isinstance(_one(target, host, dev.links_down, names=cabled), list)
    assert isinstance(_one(target, host, dev.verify, intent=intent, in_run=frozenset()), list)
    _one(target, host, dev.rollback, backup=backup, entry=dev.backup_entry(intent, changes))
    again, _ = plan()
    assert [str(c) for c in again.calls] == [str(c) for c in changes.calls]
