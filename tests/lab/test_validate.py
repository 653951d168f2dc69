"""`fabric validate` end to end on configured labs: healthy passes (RDMA skipped with a
reason), five runs give no false failure, every lab fault fails exactly where it is (one
table, star4 and ring4), `--hosts` narrows the run, and nccl skips where nccl-tests is absent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fabric.lab.lifecycle import registry
from fabric.lab.lifecycle.registry import LabInfo
from tests.lab.conftest import RING_LINK, STAR_LINK, Inject, failing, ssh, ssh_ok, validate

pytestmark = pytest.mark.lab

#: Every family but bw: faults that do not touch throughput skip the bandwidth rounds.
NO_BW = "link,mtu,addr,route,gid,cabling,version,time,forward,switch,qos,nccl"


@pytest.fixture(scope="module")
def star_lab(star4_pushed: LabInfo) -> str:
    return star4_pushed.name


@pytest.fixture(scope="module")
def ring_lab(ring4_pushed: LabInfo) -> str:
    return ring4_pushed.name


def names(result: dict[str, Any]) -> str:
    return " ".join(str(result.get(k) or "") for k in ("host", "link", "message"))


def assert_healthy(code: int, report: dict[str, Any], err: str) -> None:
    """Exit 0 with no failure, error or warning (a healthy lab warns about nothing)."""
    bad = failing(report) + [r for r in report["results"] if r["status"] == "warn"]
    assert code == 0 and not bad, f"exit {code}: {json.dumps(bad, indent=1)}\n{err[-3000:]}"


def assert_localised(code: int, report: dict[str, Any], err: str, blame: set[str],
                     must: str | None = None, exit_code: int = 1) -> None:
    """Exit `exit_code` (1; 3 for an unreachable host); every failing result names something
    in `blame`; one names `must`."""
    bad = failing(report)
    assert code == exit_code and bad, f"exit {code}, failing {bad}\n{err[-3000:]}"
    unrelated = [r for r in bad if not any(b in names(r) for b in blame)]
    assert not unrelated, json.dumps(unrelated, indent=1)
    if must is not None:
        assert any(must in names(r) for r in bad), json.dumps(bad, indent=1)


# --- healthy -----------------------------------------------------------------------------


def sshd_logins(lab: str) -> dict[str, int]:
    """Accepted SSH logins so far per Spark, from the lab sshd logs."""
    info = registry.load_lab(lab)
    return {h: (info.dir / "logs" / f"{h}.sshd.log").read_text(errors="replace")
            .count("Accepted publickey") for h, v in info.hosts.items() if v.role == "spark"}


@dataclass(frozen=True)
class Run:
    """One full `fabric validate` of the healthy star lab, and the SSH logins it made."""

    code: int
    report: dict[str, Any]
    err: str
    logins: dict[str, int]
    phases: list[str]


@pytest.fixture(scope="module")
def healthy_runs(star_lab: str, tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    """Five full validations of the healthy star lab, in a row (each test below judges them
    from its side: the first's report, every run's logins, every run's verdict)."""
    runs = []
    for n in range(5):
        before = sshd_logins(star_lab)
        tmp = tmp_path_factory.mktemp(f"healthy{n}")
        code, report, err = validate(star_lab, tmp, "--timings", str(tmp / "timings.json"))
        after = sshd_logins(star_lab)
        timings = json.loads((tmp / "timings.json").read_text())
        runs.append(Run(code, report, err, {h: after[h] - before[h] for h in after},
                        [p["phase"] for p in timings["phases"]]))
    return runs


def test_star_healthy_passes_and_skips_rdma(healthy_runs: list[Run]) -> None:
    code, report, err = healthy_runs[0].code, healthy_runs[0].report, healthy_runs[0].err
    assert_healthy(code, report, err)
    skips = [r for r in report["results"] if r["status"] == "skip"]
    assert all(r["message"] for r in skips)
    assert any(r["check"].startswith("gid.") for r in skips)
    sched = report["schedule"]
    assert sched["rounds"] == 2 and sched["rdma"].startswith("skipped: ")
    assert "lower bound" in err and {r["check"] for r in report["results"]} >= {
        "mtu.path", "bw.link"}


def test_one_ssh_session_per_spark_serves_facts_and_probes(healthy_runs: list[Run]) -> None:
    """Facts, ping matrix and bandwidth rounds: one login per Spark in every run."""
    for run in healthy_runs:
        assert_healthy(run.code, run.report, run.err)
        assert run.logins == dict.fromkeys(run.logins, 1)


def test_facts_are_read_behind_the_bandwidth_rounds(healthy_runs: list[Run]) -> None:
    """Before the rounds only the pings and the rows the probes need; the rest of the facts
    is joined after them, and the report still judges every check on whole facts."""
    for run in healthy_runs:
        assert_healthy(run.code, run.report, run.err)
        before = next(p for p in run.phases if p.startswith("before the rounds"))
        order = [run.phases.index(p) for p in (
            "connect, counters before", before, "bandwidth", "facts behind the rounds",
            "counters after", "checks")]
        assert order == sorted(order), run.phases
        passed = {r["check"] for r in run.report["results"] if r["status"] == "pass"}
        assert {"link.speed", "cabling.lldp", "version.consistent", "time.offset",
                "host.nm", "host.image", "bw.link", "mtu.path"} <= passed


def test_star_five_runs_no_false_failure(healthy_runs: list[Run]) -> None:
    assert len(healthy_runs) == 5
    for run in healthy_runs:
        assert_healthy(run.code, run.report, run.err)


def test_ring_healthy_passes(ring_lab: str, tmp_path: Path) -> None:
    code, report, err = validate(ring_lab, tmp_path)
    assert_healthy(code, report, err)
    assert report["schedule"]["rounds"] == 2


# --- faults: (lab, kind, target, --only, blame, must) ---------------------------------------


@dataclass(frozen=True)
class Fault:
    """One injected fault and where its failures must point (`unreachable`: the host that
    must be in `facts_errors`; `only_link`: every failing result is about `must`)."""

    lab: str
    kind: str
    target: str
    only: str | None
    blame: frozenset[str]
    must: str
    only_link: bool = False
    unreachable: str | None = None


def _f(lab: str, kind: str, target: str, only: str | None, blame: set[str], must: str,
       **kw: Any) -> Any:
    return pytest.param(Fault(lab, kind, target, only, frozenset(blame), must, **kw),
                        id=f"{lab}-{kind}")


S = STAR_LINK
FAULTS = [
    _f("star", "mtu", "qsfp56-dd-2-1", NO_BW, {S["spark02"], "qsfp56-dd-2-1"}, S["spark02"]),
    _f("star", "link-down", "spark03:p0", None, {"spark03"}, S["spark03"]),
    _f("star", "swap", "crs804:qsfp56-dd-1-1,crs804:qsfp56-dd-2-1", NO_BW,
       {S["spark01"], S["spark02"]}, S["spark01"]),
    _f("star", "degrade", "spark02:p0", "bw,link,mtu", {S["spark02"]}, S["spark02"],
       only_link=True),
    _f("star", "autoneg", "qsfp56-dd-4-1", None, {S["spark04"], "qsfp56-dd-4-1"},
       "qsfp56-dd-4-1"),
    _f("star", "wrong-addr", "spark04:enp1s0f0np0", NO_BW, {"spark04"}, "spark04"),
    _f("star", "default-route", "spark03:enp1s0f0np0", NO_BW, {"spark03"}, "spark03"),
    _f("star", "sshd-stop", "spark01", NO_BW, {"spark01"}, "spark01", unreachable="spark01"),
    _f("ring", "link-down", "spark02:p0", None, {RING_LINK[2]}, RING_LINK[2]),
    _f("ring", "swap", "spark01:p0,spark03:p0", NO_BW, {RING_LINK[1], RING_LINK[3]},
       RING_LINK[1]),
    _f("ring", "degrade", RING_LINK[3], "bw,link,mtu", {RING_LINK[3]}, RING_LINK[3]),
    _f("ring", "wrong-addr", "spark03:enp1s0f0np0", NO_BW, {"spark03"}, "spark03"),
    _f("ring", "default-route", "spark02:enp1s0f0np0", NO_BW, {"spark02"}, "spark02"),
    _f("ring", "sshd-stop", "spark04", NO_BW, {"spark04"}, "spark04", unreachable="spark04"),
]


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_fails_where_it_is(fault: Fault, request: pytest.FixtureRequest,
                                 tmp_path: Path, inject: Inject) -> None:
    lab: str = request.getfixturevalue(f"{fault.lab}_lab")
    inject(lab, fault.kind, fault.target)
    code, report, err = validate(lab, tmp_path, *(("--only", fault.only) if fault.only else ()))
    assert_localised(code, report, err, blame=set(fault.blame), must=fault.must,
                     exit_code=3 if fault.unreachable else 1)
    if fault.only_link:
        assert {r["link"] for r in failing(report)} == {fault.must}
    if fault.unreachable is not None:
        assert fault.unreachable in report["facts_errors"] and fault.unreachable in err


# --- a port already taken ------------------------------------------------------------------


def test_an_owners_iperf3_server_on_the_first_port_is_stepped_around(star_lab: str,
                                                                      tmp_path: Path) -> None:
    """A Spark's owner left `iperf3 -s` running on 5201 on every address (NVIDIA's playbook
    starts one so). The validation's servers start on 5201 first, find it taken and move to
    the next port: every link still measures and passes, and the owner's server stays up."""
    info = registry.load_lab(star_lab)
    sparks = sorted(h for h, v in info.hosts.items() if v.role == "spark")
    listens = "ss -Hltn | grep -q ':5201 '"
    try:
        for host in sparks:
            ssh_ok(info, host, f"iperf3 -s -D -p 5201 && for i in $(seq 50); do {listens} "
                   "&& exit 0; sleep 0.05; done; exit 1")
        code, report, err = validate(star_lab, tmp_path, "--only", "bw")
        assert_healthy(code, report, err)
        assert len([r for r in report["results"] if r["check"] == "bw.link"]) == 16
        for host in sparks:
            ssh_ok(info, host, listens)
    finally:
        for host in sparks:
            ssh(info, host, 'pkill -x -u "$(id -u)" iperf3')


# --- --hosts and nccl ------------------------------------------------------------------------


def test_star_hosts_scope(star_lab: str, tmp_path: Path, inject: Inject) -> None:
    """A fault outside --hosts is not seen; inside, it fails; only in-scope results appear."""
    inject(star_lab, "link-down", "spark03:p0")
    pair = {"spark01", "spark02"}
    code, report, err = validate(star_lab, tmp_path, "--hosts", ",".join(sorted(pair)),
                                 "--only", "link,mtu,addr,cabling,switch,bw")
    assert_healthy(code, report, err)
    assert {r["host"] for r in report["results"]} <= pair | {None, "crs804"}  # its lanes
    assert {r["link"] for r in report["results"]} <= {S[h] for h in pair} | {None}
    assert report["schedule"]["tests"] == 1 and "--hosts: a partial validation" in err
    assert_localised(*validate(star_lab, tmp_path, "--hosts", "spark03", "--only", "link"),
                     blame={"spark03"}, must=S["spark03"])
    code, _, err = validate(star_lab, tmp_path, "--hosts", "spark01,spark09")
    assert code == 2 and "spark09" in err


def test_star_nccl_skips_without_nccl_tests(star_lab: str, tmp_path: Path) -> None:
    code, report, err = validate(star_lab, tmp_path, "--only", "nccl")
    assert code == 0, err
    assert {r["status"] for r in report["results"]} == {"skip"}
    assert any("all_reduce_perf is not installed on spark01, spark02, spark03, spark04"
               in r["message"] for r in report["results"]), report["results"]
