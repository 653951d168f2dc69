"""`fabric watch` end to end: a real Prometheus (tests/watch/prom.py) scrapes `fabric watch`
on a star8 lab; a flapping cable fires the flapping-cable alert naming the cable within three
watch intervals, and healing clears it; a Spark whose management link goes away is a metric
(the others are still read) and is read again once it is back; the textfile mirrors /metrics.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.lab.lifecycle.registry import LabInfo
from fabric.watch.rules import render_rules
from tests.conftest import run_cli
from tests.lab.conftest import REPO, Inject, in_host
from tests.watch.prom import Prometheus, free_port, get, poll, prometheus

pytestmark = pytest.mark.lab

LAB = "t-watch-star8"
INTERVAL_S = 2.0
SCRAPE_S = 1.0
HOSTS = {"crs804", *(f"spark0{i}" for i in range(1, 9))}
#: The shipped rules with a lab's seconds: any link-down within 10 s fires at once.
LAB_RULES = {"window": "10s", "hold": "0s", "flaps": 1}


@pytest.fixture(scope="module")
def lab(labs: object) -> LabInfo:
    return labs("star8", LAB, pushed=True, switch_prepared=True)  # type: ignore[operator]


@pytest.fixture(scope="module")
def flapping(lab: LabInfo) -> str:
    """The cable the flap test bounces: spark02:p0's, as the intent names it."""
    from fabric.cli.common import resolve_target

    intent = resolve_target(lab.name, None, None).intent
    return next(link.id for link in intent.links if "spark02:p0" in (str(link.a), str(link.b)))


@pytest.fixture(scope="module")
def textfile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("watch-textfile")


def report(line: str) -> None:
    """A measurement, past pytest's capture (-s shows it)."""
    print(line, file=sys.__stderr__)


def _samples(text: str, name: str) -> dict[str, float]:
    """{labels text: value} of metric `name` in an exposition."""
    out = {}
    for line in text.splitlines():
        if line.startswith((name + "{", name + " ")):
            labels, _, value = line[len(name):].rpartition(" ")
            out[labels] = float(value)
    return out


@pytest.fixture(scope="module")
def watch(lab: LabInfo, textfile: Path, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[str]:
    """`fabric watch --lab LAB --listen 127.0.0.1:PORT --interval 2 --textfile DIR`, running;
    its address once every host has answered a cycle."""
    port = free_port()
    log = tmp_path_factory.mktemp("watch-log") / "watch.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabric", "watch", "--lab", LAB, "--listen",
             f"127.0.0.1:{port}", "--interval", str(INTERVAL_S), "--textfile", str(textfile)],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"

    def all_up() -> bool | None:
        up = _samples(get(f"http://{address}/metrics"), "fabric_watch_up")
        return True if len(up) == len(HOSTS) and set(up.values()) == {1.0} else None

    try:
        assert poll(all_up, 60), f"fabric watch: not every host up: {log.read_text()[-3000:]}"
        yield address
    finally:
        proc.terminate()
        code = proc.wait(timeout=20)
        text = log.read_text()
        assert "Traceback" not in text, text[-3000:]
        assert code in (0, -15), f"fabric watch exited {code}: {text[-3000:]}"


@pytest.fixture(scope="module")
def prom(watch: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    with prometheus(tmp_path_factory.mktemp("prometheus"), watch, render_rules(**LAB_RULES),
                    scrape_s=SCRAPE_S) as server:
        def scraped() -> bool | None:
            got = server.query('fabric_watch_up{job="fabric-watch"}')
            return True if len(got) == len(HOSTS) else None

        assert poll(scraped, 30), f"never scraped watch: {server.log.read_text()[-2000:]}"
        yield server


def test_every_twin_and_lane_is_labelled_from_the_intent(prom: Prometheus,
                                                         flapping: str) -> None:
    up = prom.query("fabric_link_up")
    spark_side = {(s["metric"]["spark"], s["metric"]["twin"]) for s in up
                  if s["metric"]["side"] == "spark"}
    switch_side = {s["metric"]["lane"] for s in up if s["metric"]["side"] == "switch"}
    assert len(spark_side) == 16 and len(switch_side) == 8
    assert all(s["value"][1] == "1" for s in up), [s for s in up if s["value"][1] != "1"]
    cables = {s["metric"]["cable"] for s in up}
    assert flapping in cables and len(cables) == 8
    speeds = {s["metric"]["side"]: s["value"][1] for s in prom.query("fabric_link_speed_mbps")}
    assert speeds == {"spark": "10000", "switch": "200000"}, speeds  # veth; the lane's rate
    assert len(prom.query("fabric_qsfp_present == 1")) == 8
    lldp = prom.query("fabric_lldp_neighbor_match")
    sides = sorted(s["metric"]["side"] for s in lldp)
    assert sides == ["spark"] * 16 + ["switch"] * 8, sides  # every twin (lldpd), every lane
    assert all(s["value"][1] == "1" for s in lldp), lldp
    assert not prom.firing("FabricCableFlapping")


def test_one_session_per_host_across_cycles(prom: Prometheus, watch: str) -> None:
    first = _samples(get(f"http://{watch}/metrics"), "fabric_watch_last_cycle_timestamp_seconds")
    poll(lambda: _samples(get(f"http://{watch}/metrics"),
                          "fabric_watch_last_cycle_timestamp_seconds") != first or None,
         3 * INTERVAL_S)
    connects = _samples(get(f"http://{watch}/metrics"), "fabric_watch_connects_total")
    assert len(connects) == len(HOSTS) and set(connects.values()) == {1.0}, connects
    cycle = _samples(get(f"http://{watch}/metrics"), "fabric_watch_cycle_seconds")[""]
    seconds = _samples(get(f"http://{watch}/metrics"), "fabric_watch_scrape_seconds")
    report(f"watch cycle on star8: {cycle:.3f} s (slowest host {max(seconds.values()):.3f} s)")
    assert cycle < INTERVAL_S


def test_flapping_cable_fires_the_alert_naming_it_and_healing_clears_it(
        prom: Prometheus, inject: Inject, capsys: pytest.CaptureFixture[str],
        flapping: str) -> None:
    t0 = time.monotonic()
    inject(LAB, "flap", "spark02:p0")
    fired = poll(lambda: prom.firing("FabricCableFlapping") or None, 3 * INTERVAL_S + 10)
    latency = time.monotonic() - t0
    assert fired, "FabricCableFlapping never fired"
    report(f"flapping-cable alert latency: {latency:.1f} s")
    assert {a["cable"] for a in fired} == {flapping}, fired
    assert latency <= 3 * INTERVAL_S, f"fired after {latency:.1f} s, not within 3 intervals"
    code, _, err = run_cli(["lab", "heal", "--name", LAB], capsys)
    assert code == 0, err
    t1 = time.monotonic()
    window = 10.0
    cleared = poll(lambda: (not prom.firing("FabricCableFlapping")) or None, window + 20)
    assert cleared, f"still firing {time.monotonic() - t1:.1f} s after the heal"
    report(f"cleared {time.monotonic() - t1:.1f} s after the heal (window {window:g} s)")


def test_a_host_gone_is_a_metric_and_the_others_are_still_read(
        prom: Prometheus, watch: str, lab: LabInfo) -> None:
    mgmt = lab.hosts["spark05"].mgmt_if
    url = f"http://{watch}/metrics"
    in_host(lab, "spark05", "ip", "link", "set", mgmt, "down")
    try:
        gone = poll(lambda: _samples(get(url), "fabric_watch_up").get('{host="spark05"}') == 0
                    or None, 4 * INTERVAL_S + 15)
        assert gone, "spark05 still up with its management link down"
        up = _samples(get(url), "fabric_watch_up")
        assert {k for k, v in up.items() if v == 1.0} == {
            f'{{host="{h}"}}' for h in HOSTS - {"spark05"}}, up
        links = _samples(get(url), "fabric_link_up")
        assert not any('spark="spark05",twin="enp' in k and 'side="spark"' in k for k in links)
        assert poll(lambda: prom.firing("FabricHostGone") or None, 10), "no FabricHostGone"
    finally:
        in_host(lab, "spark05", "ip", "link", "set", mgmt, "up")
    back = poll(lambda: _samples(get(url), "fabric_watch_up").get('{host="spark05"}') == 1
                or None, 90)
    assert back, "spark05 was not read again after its management link came back"
    fails = _samples(get(url), "fabric_watch_scrape_failures_total")
    assert fails['{host="spark05",kind="timeout"}'] >= 1, fails
    assert fails['{host="spark01",kind="timeout"}'] == 0, fails


def _ssh_sessions(lab: LabInfo, host: str) -> list[int]:
    """The pids of the sshd processes serving established sessions on `host`'s port 22."""
    out = in_host(lab, host, "ss", "-Htnp", "state", "established", "( sport = :22 )")
    return sorted({int(m) for m in re.findall(r"pid=(\d+)", out)})


def test_a_broken_session_is_opened_again_with_backoff(
        watch: str, lab: LabInfo, inject: Inject) -> None:
    url = f"http://{watch}/metrics"
    before = _samples(get(url), "fabric_watch_connects_total")['{host="spark06"}']
    inject(LAB, "sshd-stop", "spark06")
    sessions = _ssh_sessions(lab, "spark06")
    assert sessions, "no SSH session of watch's on spark06"
    for pid in sessions:
        os.kill(pid, signal.SIGTERM)
    gone = poll(lambda: _samples(get(url), "fabric_watch_up").get('{host="spark06"}') == 0
                or None, 3 * INTERVAL_S)
    assert gone, "spark06 still up with its session killed and sshd stopped"
    from fabric.lab.faults import heal

    heal(LAB)
    back = poll(lambda: _samples(get(url), "fabric_watch_up").get('{host="spark06"}') == 1
                or None, 30)
    assert back, "spark06 was not read again once sshd was back"
    connects = _samples(get(url), "fabric_watch_connects_total")
    assert connects['{host="spark06"}'] > before and connects['{host="spark01"}'] == 1, connects


def test_the_textfile_mirrors_the_exposition(watch: str, textfile: Path) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    path = textfile / "fabric_watch.prom"
    text = poll(lambda: path.read_text() or None, 2 * INTERVAL_S)
    assert text, f"{path} not written"
    served = {f.name for f in text_string_to_metric_families(get(f"http://{watch}/metrics"))}
    written = {f.name for f in text_string_to_metric_families(text)}
    assert written == served and "fabric_link_up" in written
    # node_exporter reads DIR/*.prom; the writer's temporary file never ends in .prom
    assert sorted(p.name for p in textfile.glob("*.prom")) == ["fabric_watch.prom"]


def test_drift_from_the_gate_is_zero_after_a_validation_and_names_a_changed_mtu(
        lab: LabInfo, inject: Inject, tmp_path: Path) -> None:
    from tests.lab.conftest import fabric

    proc = fabric("validate", "--lab", LAB, "--only", "link,mtu", "--json",
                  str(tmp_path / "report.json"))
    assert proc.returncode == 0, proc.stderr[-3000:]

    def drift() -> dict[str, float]:
        once = fabric("watch", "--lab", LAB, "--once", timeout=60)
        assert once.returncode == 0, once.stderr[-3000:]
        return _samples(once.stdout, "fabric_gate_drift")

    clean = drift()
    assert len(clean) == 16 * 3 + 8 * 2, clean  # twins: carrier, speed, MTU; lanes: MTU, LLDP
    assert set(clean.values()) == {0.0}, {k: v for k, v in clean.items() if v}
    inject(LAB, "mtu", "spark03:p0")
    drifted = {k for k, v in drift().items() if v}
    assert drifted and all('spark="spark03"' in k and 'field="mtu"' in k for k in drifted), drifted
