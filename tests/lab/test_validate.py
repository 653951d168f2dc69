"""`fabric validate` end to end on configured labs: healthy passes (RDMA skipped with a
reason), five runs give no false failure, and every lab fault fails exactly where it is."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.lab import builder

pytestmark = pytest.mark.lab

#: Every family but bw: faults that do not touch throughput skip the bandwidth rounds.
NO_BW = "link,mtu,addr,route,gid,cabling,version,time,forward,switch,qos,nccl"
STAR_LINK = {h: f"{h}:p0--crs804:qsfp56-dd-{h[-1]}-1" for h in
             ("spark01", "spark02", "spark03", "spark04")}


def fabric(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabric", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def configure(lab: str) -> None:
    """Configure the lab from its intent with `fabric push --apply` (the supported way)."""
    proc = fabric("push", "--lab", lab, "--apply")
    if proc.returncode != 0:
        warnings.warn(f"fabric push --lab {lab} --apply exited {proc.returncode}; "
                      "configuring directly instead", stacklevel=2)
        configure_directly(lab)


def configure_directly(lab: str) -> None:
    """Fallback: addresses/MTU with `ip` in the namespaces, lanes and bridge over the API."""
    import routeros_api

    from fabric.intent.build import load_intent
    from fabric.lab.registry import load_lab

    info = load_lab(lab)
    intent = load_intent(info.topology_path, info.inventory_dir)
    for plan in intent.interfaces():
        netns = info.namespaces[plan.host]
        for cmd in (["addr", "replace", str(plan.address), "dev", plan.netdev],
                    ["link", "set", plan.netdev, "mtu", str(plan.mtu), "up"]):
            subprocess.run(["ip", "-n", netns, *cmd], check=True)
    if intent.switch is None or info.switch is None:
        return
    sw = intent.switch
    pool = routeros_api.RouterOsApiPool(info.mgmt[info.switch], username=info.routeros_user,
                                        password=info.routeros_password, port=info.api_port,
                                        plaintext_login=True)
    try:
        api = pool.get_api()
        eth = api.get_resource("/interface/ethernet")
        lanes = [lane for lane in sw.lanes if lane.link_id is not None]
        for lane in lanes:
            eth.set(id=lane.name, mtu=str(sw.mtu), l2mtu=str(sw.l2mtu), speed=lane.speed,
                    **{"fec-mode": lane.fec_mode,
                       "auto-negotiation": "yes" if lane.auto_negotiation else "no"})
        bridges = api.get_resource("/interface/bridge")
        if not bridges.get(name=sw.bridge):
            bridges.add(name=sw.bridge, mtu=str(sw.mtu))
        ports = api.get_resource("/interface/bridge/port")
        have = {p.get("interface") for p in ports.get()}
        for lane in lanes:
            if lane.name not in have:
                ports.add(bridge=sw.bridge, interface=lane.name)
    finally:
        pool.disconnect()


def _lab(topology: str, name: str) -> Iterator[str]:
    builder.down(name)
    try:
        builder.up(topology, name)
        configure(name)
        yield name
    finally:
        builder.down(name)


@pytest.fixture(scope="module")
def star_lab() -> Iterator[str]:
    yield from _lab("star4", "t-val-star4")


@pytest.fixture(scope="module")
def ring_lab() -> Iterator[str]:
    yield from _lab("ring4", "t-val-ring4")


def validate(lab: str, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "report.json"
    out.unlink(missing_ok=True)
    proc = fabric("validate", "--lab", lab, "--json", str(out), *extra)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


def failing(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report.get("results", []) if r["status"] in ("fail", "error")]


def names(result: dict[str, Any]) -> str:
    return " ".join(str(result.get(k) or "") for k in ("host", "link", "message"))


def assert_healthy(code: int, report: dict[str, Any], err: str) -> None:
    bad = failing(report)
    assert code == 0 and not bad, f"exit {code}: {json.dumps(bad, indent=1)}\n{err[-3000:]}"


@pytest.fixture
def faulty(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Labs faulted by the test; healed afterwards whatever happens."""
    labs: list[str] = []
    yield labs
    for lab in labs:
        proc = fabric("lab", "heal", "--name", lab)
        assert proc.returncode == 0, proc.stderr


def inject(faulty: list[str], lab: str, kind: str, target: str) -> None:
    proc = fabric("lab", "fault", kind, target, "--name", lab)
    assert proc.returncode == 0, proc.stderr
    faulty.append(lab)


def assert_localised(code: int, report: dict[str, Any], err: str, blame: set[str],
                     must: str | None = None) -> None:
    """Exit 1; every failing result names something in `blame`; one names `must`."""
    bad = failing(report)
    assert code == 1 and bad, f"exit {code}, failing {bad}\n{err[-3000:]}"
    unrelated = [r for r in bad if not any(b in names(r) for b in blame)]
    assert not unrelated, json.dumps(unrelated, indent=1)
    if must is not None:
        assert any(must in names(r) for r in bad), json.dumps(bad, indent=1)


# --- star4 -----------------------------------------------------------------------------------


def test_star_healthy_passes_and_skips_rdma(star_lab: str, tmp_path: Path) -> None:
    code, report, err = validate(star_lab, tmp_path)
    assert_healthy(code, report, err)
    skips = [r for r in report["results"] if r["status"] == "skip"]
    assert all(r["message"] for r in skips)
    assert any(r["check"].startswith("gid.") for r in skips)
    sched = report["schedule"]
    assert sched["rounds"] == 2 and sched["rdma"].startswith("skipped: ")
    assert "lower bound" in err and {r["check"] for r in report["results"]} >= {
        "mtu.path", "bw.link"}


def test_star_five_runs_no_false_failure(star_lab: str, tmp_path: Path) -> None:
    for _ in range(5):
        assert_healthy(*validate(star_lab, tmp_path))


def test_star_switch_mtu(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "mtu", "qsfp56-dd-2-1")
    assert_localised(*validate(star_lab, tmp_path, "--only", NO_BW),
                     blame={STAR_LINK["spark02"], "qsfp56-dd-2-1"}, must=STAR_LINK["spark02"])


def test_star_link_down(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "link-down", "spark03:p0")
    assert_localised(*validate(star_lab, tmp_path), blame={"spark03"},
                     must=STAR_LINK["spark03"])


def test_star_swap(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "swap", "crs804:qsfp56-dd-1-1,crs804:qsfp56-dd-2-1")
    assert_localised(*validate(star_lab, tmp_path, "--only", NO_BW),
                     blame={STAR_LINK["spark01"], STAR_LINK["spark02"]},
                     must=STAR_LINK["spark01"])


def test_star_degrade_blames_one_cable(star_lab: str, tmp_path: Path,
                                       faulty: list[str]) -> None:
    inject(faulty, star_lab, "degrade", "spark02:p0")
    code, report, err = validate(star_lab, tmp_path, "--only", "bw,link,mtu")
    assert_localised(code, report, err, blame={STAR_LINK["spark02"]}, must=STAR_LINK["spark02"])
    assert {r["link"] for r in failing(report)} == {STAR_LINK["spark02"]}


def test_star_autoneg(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "autoneg", "qsfp56-dd-4-1")
    assert_localised(*validate(star_lab, tmp_path), blame={STAR_LINK["spark04"],
                                                           "qsfp56-dd-4-1"},
                     must="qsfp56-dd-4-1")


def test_star_wrong_addr(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "wrong-addr", "spark04:enp1s0f0np0")
    assert_localised(*validate(star_lab, tmp_path, "--only", NO_BW), blame={"spark04"},
                     must="spark04")


def test_star_default_route(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "default-route", "spark03:enp1s0f0np0")
    assert_localised(*validate(star_lab, tmp_path, "--only", NO_BW), blame={"spark03"},
                     must="spark03")


def test_star_sshd_stop(star_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, star_lab, "sshd-stop", "spark01")
    code, report, err = validate(star_lab, tmp_path, "--only", NO_BW)
    assert_localised(code, report, err, blame={"spark01"}, must="spark01")
    assert "spark01" in report["facts_errors"] and "spark01" in err


# --- ring4 -----------------------------------------------------------------------------------

RING_LINK = {1: "spark01:p0--spark02:p1", 2: "spark02:p0--spark03:p1",
             3: "spark03:p0--spark04:p1", 4: "spark04:p0--spark01:p1"}


def test_ring_healthy_passes(ring_lab: str, tmp_path: Path) -> None:
    code, report, err = validate(ring_lab, tmp_path)
    assert_healthy(code, report, err)
    assert report["schedule"]["rounds"] == 2


def test_ring_link_down(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "link-down", "spark02:p0")
    assert_localised(*validate(ring_lab, tmp_path), blame={RING_LINK[2]}, must=RING_LINK[2])


def test_ring_swap(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "swap", "spark01:p0,spark03:p0")
    assert_localised(*validate(ring_lab, tmp_path, "--only", NO_BW),
                     blame={RING_LINK[1], RING_LINK[3]}, must=RING_LINK[1])


def test_ring_degrade(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "degrade", RING_LINK[3])
    code, report, err = validate(ring_lab, tmp_path, "--only", "bw,link,mtu")
    assert_localised(code, report, err, blame={RING_LINK[3]}, must=RING_LINK[3])


def test_ring_wrong_addr(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "wrong-addr", "spark03:enp1s0f0np0")
    assert_localised(*validate(ring_lab, tmp_path, "--only", NO_BW), blame={"spark03"},
                     must="spark03")


def test_ring_default_route(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "default-route", "spark02:enp1s0f0np0")
    assert_localised(*validate(ring_lab, tmp_path, "--only", NO_BW), blame={"spark02"},
                     must="spark02")


def test_ring_sshd_stop(ring_lab: str, tmp_path: Path, faulty: list[str]) -> None:
    inject(faulty, ring_lab, "sshd-stop", "spark04")
    code, report, err = validate(ring_lab, tmp_path, "--only", NO_BW)
    assert_localised(code, report, err, blame={"spark04"}, must="spark04")
    assert "spark04" in report["facts_errors"]
