"""counters.*: deltas of recorded counter snapshots against the profile's thresholds.

The baseline readings are real: the mlx5 `ethtool -S` capture of the fixture folder (parser
case ethtool_S/mlx5_phy_counters) for every twin, and the `ip -s -s -j link` capture of a
macvlan twin (parser case ip_link_stats/veth_macvlan_ss) for the lab-like cases. A test
changes one counter and expects exactly one check to speak, about that twin or lane.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from fabric.facts import (
    CounterSnapshot,
    CounterWindow,
    Facts,
    PortCounters,
    QosFact,
    facts_from_json,
    facts_to_json,
)
from fabric.intent.model import Intent
from fabric.intent.profiles import CounterThresholds, get_profile
from fabric.parsers import parse
from fabric.parsers.records import EthtoolCounter
from fabric.probes.counters import (
    ETHERNET,
    ETHTOOL,
    HW_COUNTERS,
    INTERFACE,
    IP,
    RDMA,
    spark_jobs,
    spark_snapshot,
    switch_snapshot,
)
from fabric.remote.batch import JobOutput
from fabric.report.model import CheckResult
from tests.validators import builder
from tests.validators.helpers import failures, link_id, show
from validators import run_checks
from validators.counters import (
    HOST_DROPS,
    HOST_ERRORS,
    HOST_FLAPS,
    HOST_PAUSE,
    HOST_RETRANS,
    LANE_DROPS,
    LANE_ERRORS,
    LANE_FLAPS,
    LANE_PAUSE,
    Signal,
    lossless_signals,
)

CASES = Path(__file__).parents[1] / "parsers" / "linux"
CHECKS = ("counters.flaps", "counters.errors", "counters.drops", "counters.retrans",
          "counters.pause")
LANE = "qsfp56-dd-2-1"  # spark02's lane in star4


def _names(signals: tuple[Signal, ...], source: str) -> set[str]:
    return {c.name for s in signals for g in s.groups for c in g if c.source == source}


def _real_ethtool() -> dict[str, int]:
    raw = (CASES / "ethtool_S" / "mlx5_phy_counters.raw").read_text()
    return {r.name: r.value for r in parse("ethtool_S", raw) if isinstance(r, EthtoolCounter)}


def _twin_values() -> dict[str, dict[str, int]]:
    """Every counter the host tables name, seeded from the real mlx5 capture (zero where
    the capture's author removed zero counters)."""
    host = (*HOST_FLAPS, *HOST_ERRORS, *HOST_DROPS, *HOST_RETRANS, *HOST_PAUSE,
            *lossless_signals((3,)))  # PFC priority 3's counters: a lossless twin's
    real = _real_ethtool()
    ethtool = {n: real.get(n, 0) for n in _names(host, ETHTOOL)
               | {"rx_packets_phy", "tx_packets_phy", "rx_packets"}}
    ip = {n: 0 for n in _names(host, IP)} | {"rx_packets": 1000, "tx_packets": 1000,
                                               "carrier_changes": 2}
    return {IP: ip, ETHTOOL: ethtool, RDMA: dict.fromkeys(_names(host, RDMA), 0)}


def _lane_values() -> dict[str, dict[str, int]]:
    lane = (*LANE_FLAPS, *LANE_ERRORS, *LANE_DROPS, *LANE_PAUSE)
    return {INTERFACE: dict.fromkeys(_names(lane, INTERFACE) | {"rx-packet", "tx-packet"}, 0),
            ETHERNET: dict.fromkeys(_names(lane, ETHERNET) | {"rx-packet", "tx-packet"}, 0)}


#: Packets the probes move per direction and port (the ratio denominators).
TRAFFIC = {(IP, "rx_packets"), (IP, "tx_packets"), (ETHTOOL, "rx_packets_phy"),
           (ETHTOOL, "tx_packets_phy"), (ETHTOOL, "rx_packets"), (INTERFACE, "rx-packet"),
           (INTERFACE, "tx-packet"), (ETHERNET, "rx-packet"), (ETHERNET, "tx-packet")}
PACKETS = 10_000_000


def _after(values: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {src: {n: v + (PACKETS if (src, n) in TRAFFIC else 0) for n, v in cs.items()}
            for src, cs in values.items()}


def _snapshot(it: Intent, host: str, values: dict[str, dict[str, int]], taken: str
              ) -> CounterSnapshot:
    if it.switch is not None and host == it.switch.host:
        names = [lane.name for lane in it.switch.lanes if lane.link_id]
    else:
        names = [p.netdev for p in it.interfaces(host)]
    return CounterSnapshot(host, taken, {n: PortCounters(n, values) for n in names})


def window(it: Intent) -> CounterWindow:
    """A healthy window: traffic moved, nothing else changed."""
    hosts = {h.name: _twin_values() for h in it.sparks}
    if it.switch is not None:
        hosts[it.switch.host] = _lane_values()
    before = {h: _snapshot(it, h, v, "2026-11-30T00:00:01+00:00") for h, v in hosts.items()}
    after = {h: _snapshot(it, h, _after(v), "2026-11-30T00:00:42+00:00")
             for h, v in hosts.items()}
    return CounterWindow(before, after, ("ping", "bandwidth"), 41.0)


def healthy(it: Intent) -> Facts:
    return dataclasses.replace(builder.healthy(it), counters=window(it))


def bump(facts: Facts, host: str, port: str, source: str, name: str, by: int,
         which: str = "after") -> Facts:
    """`name` of `source` on `port` grown by `by` in the `which` snapshot."""
    assert facts.counters is not None
    snaps = dict(getattr(facts.counters, which))
    snap = snaps[host]
    pc = snap.ports[port]
    values = {src: dict(cs) for src, cs in pc.values.items()}
    values[source][name] = values[source].get(name, 0) + by
    ports = {**snap.ports, port: dataclasses.replace(pc, values=values)}
    snaps[host] = dataclasses.replace(snap, ports=ports)
    return dataclasses.replace(facts, counters=dataclasses.replace(facts.counters,
                                                                   **{which: snaps}))


def results(it: Intent, facts: Facts, check: str) -> list[CheckResult]:
    return [r for r in run_checks(it, facts, {check})]


def twin(it: Intent, host: str, twin_index: int = 0) -> str:
    return next(p.netdev for p in it.interfaces(host) if p.twin == twin_index)


# --- healthy -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["star4", "ring4"])
def test_healthy_window_passes_every_twin_and_lane(name: str) -> None:
    it = builder.intent(name)
    facts = healthy(it)
    failures(it, facts)  # nothing fails anywhere
    for check in CHECKS:
        got = results(it, facts, check)
        assert {r.status for r in got} == {"pass"}, show(got)
        ports = {(r.host, r.link) for r in got}
        twins = {(p.host, p.link_id) for p in it.interfaces()}
        lanes = ({(it.switch.host, lane.link_id) for lane in it.switch.lanes if lane.link_id}
                 if it.switch is not None and check != "counters.retrans" else set())
        assert ports == twins | lanes, check
        assert all(r.host and r.link and r.host in r.message and r.link in r.message
                   for r in got)


def test_pass_says_the_window_and_the_counters() -> None:
    it = builder.intent("star4")
    r = results(it, healthy(it), "counters.flaps")[0]
    assert "during ping + bandwidth (41.0 s)" in r.message
    assert "carrier_changes +0" in r.message and "link_down_events_phy +0" in r.message
    assert r.expected == {"ip:carrier_changes": 0, "ethtool:link_down_events_phy": 0}


# --- one counter grows, one check speaks, naming the twin or lane --------------------------


def _one_failure(it: Intent, facts: Facts, check: str, host: str, link: str,
                 status: str = "fail") -> CheckResult:
    bad = [r for r in run_checks(it, facts) if r.status in ("fail", "error", "warn")]
    assert [(r.check, r.status, r.host, r.link) for r in bad] == [(check, status, host, link)], \
        show(bad)
    assert bad[0].hint and bad[0].message
    return bad[0]


def test_twin_carrier_flap_fails_flaps_naming_twin_and_link() -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark02")
    r = _one_failure(it, bump(healthy(it), "spark02", nd, IP, "carrier_changes", 2),
                     "counters.flaps", "spark02", link_id(it, "spark02"))
    assert f"spark02 {nd} (p0 twin A)" in r.message and link_id(it, "spark02") in r.message
    assert "carrier_changes +2 (max 0)" in r.message
    assert r.actual["ip:carrier_changes"] == 2 and r.expected["ip:carrier_changes"] == 0


def test_link_down_events_phy_alone_fails_flaps() -> None:
    it = builder.intent("ring4")
    nd = twin(it, "spark03", 1)
    link = next(p.link_id for p in it.interfaces("spark03") if p.netdev == nd)
    r = _one_failure(it, bump(healthy(it), "spark03", nd, ETHTOOL, "link_down_events_phy", 1),
                     "counters.flaps", "spark03", link)
    assert "link_down_events_phy +1" in r.message and "twin B" in r.message


def test_lane_link_downs_fail_flaps_naming_the_lane() -> None:
    it = builder.intent("star4")
    r = _one_failure(it, bump(healthy(it), "crs804", LANE, INTERFACE, "link-downs", 1),
                     "counters.flaps", "crs804", link_id(it, "spark02"))
    assert f"crs804:{LANE} to spark02 on " in r.message and "link-downs +1 (max 0)" in r.message


@pytest.mark.parametrize(("source", "counter"), [
    (ETHTOOL, "rx_crc_errors_phy"), (ETHTOOL, "rx_symbol_err_phy"),
    (ETHTOOL, "rx_pcs_symbol_err_phy"), (IP, "rx_errors")])
def test_twin_physical_errors_fail_errors(source: str, counter: str) -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark03")
    r = _one_failure(it, bump(healthy(it), "spark03", nd, source, counter, 5),
                     "counters.errors", "spark03", link_id(it, "spark03"))
    assert f"{counter} +5 (max 0)" in r.message


@pytest.mark.parametrize("counter", ["rx-fcs-error", "rs-fec-uncorrected", "rx-code-error"])
def test_lane_fcs_and_fec_errors_fail_errors(counter: str) -> None:
    it = builder.intent("star4")
    r = _one_failure(it, bump(healthy(it), "crs804", LANE, ETHERNET, counter, 3),
                     "counters.errors", "crs804", link_id(it, "spark02"))
    assert f"{counter} +3" in r.message


def test_corrected_fec_bits_are_fine() -> None:
    it = builder.intent("star4")
    facts = bump(healthy(it), "spark01", twin(it, "spark01"), ETHTOOL, "rx_corrected_bits_phy",
                 123456)
    failures(it, facts)


def test_drops_are_judged_as_a_share_of_the_packets() -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark04")
    allowed = int(it.profile.counters.drops_max_ratio * PACKETS)  # 10 of 10M at 1e-6
    failures(it, bump(healthy(it), "spark04", nd, ETHTOOL, "rx_discards_phy", allowed))
    r = _one_failure(it, bump(healthy(it), "spark04", nd, ETHTOOL, "rx_discards_phy",
                              allowed + 1),
                     "counters.drops", "spark04", link_id(it, "spark04"))
    assert f"rx_discards_phy +{allowed + 1} (max 1e-06 of rx_packets_phy = {allowed})" \
        in r.message
    r = _one_failure(it, bump(healthy(it), "crs804", LANE, ETHERNET, "tx-drop", 500),
                     "counters.drops", "crs804", link_id(it, "spark02"))
    assert "tx-drop +500 (max 1e-06 of tx-packet = 10)" in r.message


def test_drops_on_a_lane_that_carried_almost_nothing_are_judged_against_the_floor() -> None:
    """An idle lane (spark04 unreachable: no test ran over it) saw 9 frames and dropped 2:
    the ratio alone would fail it (0.22 > 1e-6), the profile's floor says a sample that
    small means nothing; a real burst of drops on it still fails, naming the floor."""
    it = builder.intent("star4")
    floor = it.profile.counters.drops_floor
    assert floor == 10
    lane = "qsfp56-dd-4-1"
    idle = bump(bump(healthy(it), "crs804", lane, ETHERNET, "rx-packet", 9 - PACKETS),
                "crs804", lane, ETHERNET, "rx-drop", 2)
    failures(it, idle)
    busy = bump(bump(healthy(it), "crs804", lane, ETHERNET, "rx-packet", 9 - PACKETS),
                "crs804", lane, ETHERNET, "rx-drop", floor + 1)
    r = _one_failure(it, busy, "counters.drops", "crs804", link_id(it, "spark04"))
    assert f"rx-drop +{floor + 1} (max {floor}, the floor" in r.message, r.message


def test_rx_out_of_buffer_counts_as_drops() -> None:
    it = builder.intent("star4")
    _one_failure(it, bump(healthy(it), "spark01", twin(it, "spark01", 1), ETHTOOL,
                          "rx_out_of_buffer", 534918379),
                 "counters.drops", "spark01", link_id(it, "spark01"))


@pytest.mark.parametrize("counter", ["out_of_sequence", "packet_seq_err",
                                     "local_ack_timeout_err", "roce_adp_retrans"])
def test_roce_retransmissions_fail_retrans(counter: str) -> None:
    it = builder.intent("star4")
    r = _one_failure(it, bump(healthy(it), "spark02", twin(it, "spark02", 1), RDMA, counter, 7),
                     "counters.retrans", "spark02", link_id(it, "spark02"))
    assert f"{counter} +7 (max 0)" in r.message


def test_pause_on_a_lossy_fabric_warns_and_pfc_priorities_are_not_judged() -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark01")
    r = _one_failure(it, bump(healthy(it), "spark01", nd, ETHTOOL, "tx_pause_ctrl_phy", 44),
                     "counters.pause", "spark01", link_id(it, "spark01"), status="warn")
    assert "tx_pause_ctrl_phy +44 (max 0)" in r.message
    # mlx5 lists rx/tx_prioN_pause only where PFC is on: they are never read as an alarm
    pfc3 = builder.replace_spark(healthy(it), "spark01",
                                 qos={nd: QosFact(nd, "dscp", (3,))})
    got = results(it, bump(pfc3, "spark01", nd, ETHTOOL, "rx_prio3_pause", 9), "counters.pause")
    assert {r.status for r in got} == {"pass"}  # PFC priority 3: pausing is its job
    mine = [r for r in got if nd in r.message]
    assert "prio" not in mine[0].message and "rx_pause_ctrl_phy +0" in mine[0].message
    strict = dataclasses.replace(it, profile=dataclasses.replace(
        it.profile, counters=dataclasses.replace(it.profile.counters, pause_status="fail")))
    _one_failure(strict, bump(healthy(it), "crs804", LANE, ETHERNET, "rx-pause", 2),
                 "counters.pause", "crs804", link_id(it, "spark02"))


def test_the_lossless_class_is_reported_per_twin_with_pfc_pause_and_cnps() -> None:
    """star4-lossless: each twin's PFC-priority pause frames and ECN/CNP counters during the
    probes, as a pass that shows the numbers (pausing and marking are the class at work); on
    a lossy topology the check is a skip that says why."""
    it = builder.intent("star4-lossless")
    nd = twin(it, "spark01")
    facts = bump(bump(healthy(it), "spark01", nd, ETHTOOL, "tx_prio3_pause", 12),
                 "spark01", nd, RDMA, "np_cnp_sent", 5)
    got = results(it, facts, "counters.lossless")
    assert {r.status for r in got} == {"pass"}, show(got)
    mine = [r for r in got if r.host == "spark01" and nd in r.message]
    assert mine and "tx_prio3_pause +12" in mine[0].message and "np_cnp_sent +5" in \
        mine[0].message, show(mine)
    [skip] = results(builder.intent("star4"), healthy(builder.intent("star4")),
                     "counters.lossless")
    assert skip.status == "skip" and "lossy" in skip.message


def test_a_counter_that_went_backwards_fails() -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark03")
    facts = bump(healthy(it), "spark03", nd, ETHTOOL, "link_down_events_phy", 5, which="before")
    r = _one_failure(it, facts, "counters.flaps", "spark03", link_id(it, "spark03"))
    assert "link_down_events_phy went backwards by 5" in r.message


# --- not available is a skip with why, never a silent pass ----------------------------------


def _without(facts: Facts, host: str, port: str, source: str, why: str | None) -> Facts:
    """`source` gone from `port` in both snapshots (with `why`, or just not listed)."""
    assert facts.counters is not None
    changes = {}
    for which in ("before", "after"):
        snaps = dict(getattr(facts.counters, which))
        pc = snaps[host].ports[port]
        values = {s: cs for s, cs in pc.values.items() if s != source}
        unavailable = {**pc.unavailable, **({source: why} if why else {})}
        if why is None:
            values[source] = {}
        ports = {**snaps[host].ports, port: PortCounters(port, values, unavailable)}
        snaps[host] = dataclasses.replace(snaps[host], ports=ports)
        changes[which] = snaps
    return dataclasses.replace(facts, counters=dataclasses.replace(facts.counters, **changes))


def test_macvlan_twin_without_ethtool_judges_kernel_counters_and_skips_the_rest() -> None:
    it = builder.intent("star4")
    nd = twin(it, "spark02")
    why = f"`ethtool -S {nd}`: no stats available (exit 94)"
    facts = _without(healthy(it), "spark02", nd, ETHTOOL, why)
    failures(it, facts)
    mine = [r for r in run_checks(it, facts) if r.host == "spark02" and nd in r.message
            and r.check.startswith("counters.")]
    flaps = [r for r in mine if r.check == "counters.flaps"]
    assert [r.status for r in flaps] == ["pass"]  # carrier_changes is the kernel's own
    errors = {r.status: r for r in mine if r.check == "counters.errors"}
    assert set(errors) == {"pass", "skip"}
    assert "symbol errors, FEC-uncorrectable errors: " + why in errors["skip"].message
    assert "rx_crc_errors +0" in errors["pass"].message  # the kernel's CRC counter
    pause = [r for r in mine if r.check == "counters.pause"]
    assert [r.status for r in pause] == ["skip"] and why in pause[0].message


def test_lane_without_ethernet_stats_skips_naming_the_attributes() -> None:
    """A RouterOS that does not print an attribute: skip naming it, never a zero pass."""
    it = builder.intent("star4")
    facts = _without(healthy(it), "crs804", LANE, ETHERNET, None)
    failures(it, facts)
    got = [r for r in results(it, facts, "counters.errors") if r.link == link_id(it, "spark02")
           and r.host == "crs804"]
    skip = [r for r in got if r.status == "skip"]
    assert len(skip) == 1 and "/interface/ethernet print stats does not report rx-fcs-error, " \
        "tx-fcs-error" in skip[0].message
    passed = [r for r in got if r.status == "pass"]
    assert passed and "fcs" not in passed[0].message  # only /interface rx-error/tx-error
    pause = [r for r in results(it, facts, "counters.pause")
             if r.link == link_id(it, "spark02") and r.host == "crs804"]
    assert [r.status for r in pause] == ["skip"]


def test_counter_missing_after_is_not_judged() -> None:
    it = builder.intent("star4")
    facts = healthy(it)
    assert facts.counters is not None
    after = dict(facts.counters.after)
    sw = after["crs804"]
    pc = sw.ports[LANE]
    values = {s: dict(cs) for s, cs in pc.values.items()}
    del values[INTERFACE]["link-downs"]
    after["crs804"] = dataclasses.replace(sw, ports={**sw.ports,
                                                     LANE: PortCounters(LANE, values)})
    facts = dataclasses.replace(facts, counters=dataclasses.replace(facts.counters,
                                                                    after=after))
    got = [r for r in results(it, facts, "counters.flaps") if r.host == "crs804"
           and r.link == link_id(it, "spark02")]
    assert [r.status for r in got] == ["skip"] and "link-downs" in got[0].message


def test_veth_profile_skips_retrans_with_the_reason() -> None:
    it = builder.intent("star4")
    lab = dataclasses.replace(it, profile=get_profile("veth"))
    got = results(lab, healthy(it), "counters.retrans")
    assert [(r.status, r.message) for r in got] == [
        ("skip", "profile veth has no RDMA: RoCE retransmission counters not judged")]


def test_no_window_skips_each_check_once() -> None:
    it = builder.intent("star4")
    for check in CHECKS:
        got = results(it, builder.healthy(it), check)
        assert len(got) == 1 and got[0].status == "skip" and "fabric validate" in got[0].message


def test_a_host_whose_snapshot_failed_errors_once_per_check() -> None:
    it = builder.intent("star4")
    facts = healthy(it)
    assert facts.counters is not None
    after = {**facts.counters.after, "spark03": CounterSnapshot(
        "spark03", "t", error="counters not read: ReadTimeout: no answer")}
    facts = dataclasses.replace(facts, counters=dataclasses.replace(facts.counters,
                                                                    after=after))
    bad = [r for r in run_checks(it, facts) if r.status in ("fail", "error", "warn")]
    assert sorted(r.check for r in bad) == sorted(CHECKS)
    assert all(r.status == "error" and r.host == "spark03" and "ReadTimeout" in r.message
               for r in bad)


# --- snapshots from real outputs, and the facts round trip ----------------------------------


def test_spark_snapshot_from_captured_outputs() -> None:
    ip = (CASES / "ip_link_stats" / "veth_macvlan_ss.raw").read_text()
    ethtool = (CASES / "ethtool_S" / "mlx5_phy_counters.raw").read_text()
    hw = (CASES / "sysfs_hw_counters" / "synthetic_mlx5_two_devices.raw").read_text()
    jobs = [JobOutput(0, ip, 0), JobOutput(1, hw, 0),
            JobOutput(2, "no stats available\n", 94), JobOutput(3, ethtool, 0)]
    snap = spark_snapshot("spark01", "t", [("mv0", None), ("va", "rocep1s0f0")], jobs)
    mv0, va = snap.ports["mv0"], snap.ports["va"]
    assert mv0.values[IP]["carrier_changes"] == 3 and mv0.values[IP]["rx_crc_errors"] == 0
    assert mv0.unavailable == {ETHTOOL: "`ethtool -S mv0`: no stats available (exit 94)",
                               RDMA: "mv0 has no RDMA device"}
    assert va.values[ETHTOOL]["rx_out_of_buffer"] == 534918379
    assert va.values[RDMA]["roce_adp_retrans"] == 7 and va.unavailable == {}
    assert "link_down_events_phy" not in va.values[ETHTOOL]  # absent, not zero


def test_spark_reads_need_no_root() -> None:
    """World-readable sources only: a non-root login reads them without sudo."""
    jobs = spark_jobs(["enp1s0f0np0", "enP2p1s0f0np0"])
    assert jobs == ["ip -s -s -j link show", HW_COUNTERS,
                    "ethtool -S enp1s0f0np0", "ethtool -S enP2p1s0f0np0"]
    assert HW_COUNTERS.endswith("grep -s -H . /sys/class/infiniband/*/ports/*/hw_counters/*")


def test_a_host_without_rdma_counters_reads_none_without_a_grep() -> None:
    """No hw_counters file (no RDMA device: this machine, a lab Spark): the job ends at the
    shell's glob, exit 0 and nothing printed (`grep` on the unmatched glob exited 2)."""
    assert not Path("/sys/class/infiniband").exists()
    done = subprocess.run(["sh", "-c", HW_COUNTERS], capture_output=True, text=True,
                          timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_spark_snapshot_when_a_job_fails() -> None:
    jobs = [JobOutput(0, "", None), JobOutput(1, "", 2), JobOutput(2, "garbage\n", 0)]
    snap = spark_snapshot("spark01", "t", [("enp1s0f0np0", "rocep1s0f0")], jobs)
    pc = snap.ports["enp1s0f0np0"]
    assert pc.values == {}
    assert pc.unavailable[IP] == "`ip -s -s -j link show`: no output came back"
    assert pc.unavailable[RDMA] == "no RDMA hw_counters under /sys/class/infiniband"
    assert "line 1" in pc.unavailable[ETHTOOL] or "garbage" in pc.unavailable[ETHTOOL]


def test_switch_snapshot_keeps_counters_only_and_names_what_is_missing() -> None:
    rows = [{"name": "qsfp56-dd-1-1", "link-downs": "3", "rx-drop": "5", "mtu": "9000",
             "running": "true", "last-link-down-time": "2026-11-30 10:00:00"}]
    snap = switch_snapshot("crs804", "t", ["qsfp56-dd-1-1", "qsfp56-dd-2-1"],
                           {INTERFACE: rows, ETHERNET: "/interface/ethernet print stats "
                            "failed: RouterOsApiCommunicationError: no such command"})
    one, two = snap.ports["qsfp56-dd-1-1"], snap.ports["qsfp56-dd-2-1"]
    assert one.values == {INTERFACE: {"link-downs": 3, "rx-drop": 5}}
    assert one.unavailable[ETHERNET].startswith("/interface/ethernet print stats failed")
    assert two.unavailable[INTERFACE] == "qsfp56-dd-2-1 is not listed by /interface print stats"


def test_facts_with_counters_round_trip_through_json() -> None:
    it = builder.intent("star4")
    facts = healthy(it)
    assert facts_from_json(facts_to_json(facts)) == facts


def test_thresholds_are_profile_data() -> None:
    assert get_profile("cx7-200g").counters == CounterThresholds(
        flaps_max=0, errors_max=0, drops_max_ratio=1e-6, drops_floor=10, retrans_max=0,
        pause_max=0, pause_status="warn")
    assert get_profile("veth").counters.drops_max_ratio == 1e-3
    with pytest.raises(ValueError, match="pause_status"):
        CounterThresholds(pause_status="maybe")
