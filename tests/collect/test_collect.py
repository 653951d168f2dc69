"""collect_facts end to end without a lab: the switch through the emulator, the Sparks through
a recorded transcript behind a fake netmiko connection, unreachable hosts as errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fabric.collect.gather as collect
from fabric.collect.gather import collect_facts
from fabric.credentials import Credentials
from fabric.facts import facts_from_json
from fabric.remote.batch import MARK
from fabric.remote.exec import LOGIN_ENV, SPARK_SSH, ScriptTimeout
from fabric.remote.runner import describe_failure
from fabric.remote.transport import AuthFailed, ConnectFailed
from fabric.target import Target
from tests.conftest import run_cli
from tests.remote.conftest import PASSWORD, SPARKS, USER, Emulator, write_inventory
from tests.remote.helpers import FakeChannel, FakeSession

from .helpers import fixture


class FakeNetmiko(FakeSession):
    """Stands in for nornir_netmiko's plugin: answers the batch with a recorded transcript."""

    def __init__(self, transcript: str) -> None:
        super().__init__(lambda _command, _stdin: (0, transcript))
        self.closed = False

    @property
    def connection(self) -> FakeNetmiko:
        return self

    def close(self) -> None:
        self.closed = True


def _fake_sparks(monkeypatch: pytest.MonkeyPatch, hosts: list[str]) -> dict[str, FakeNetmiko]:
    fakes = {h: FakeNetmiko(fixture("lab_star4_spark01.transcript")) for h in hosts}
    real = collect.make_nornir

    def make(target: Target, wanted: list[str] | None = None) -> Any:
        nr = real(target, wanted)
        for name, fake in fakes.items():
            if name in nr.inventory.hosts:
                nr.inventory.hosts[name].connections[SPARK_SSH] = fake
        return nr

    monkeypatch.setattr(collect, "make_nornir", make)
    return fakes


def test_switch_facts_through_the_emulator(target: Target) -> None:
    facts = collect_facts(target, ["crs804"])
    assert facts.errors == {} and facts.sparks == {}
    sw = facts.switch
    assert sw is not None
    assert (sw.identity, sw.board) == ("crs804", "CRS804-4DDQ")
    assert sw.version.startswith("7.")
    assert len(sw.lanes) == 33 and "ether1" in sw.lanes  # a CRS804 lists its RJ45 port too
    lane = sw.lanes["qsfp56-dd-1-1"]
    assert lane.running and lane.status == "link-ok" and lane.rate == "100Gbps"  # 200G on auto
    assert (lane.auto_negotiation, lane.max_l2mtu, lane.mtu) == (True, 9570, 1500)
    assert len(sw.lanes) == 33 and "ether1" in sw.lanes  # a CRS804 lists its RJ45 port too
    assert sw.lanes["qsfp56-dd-1-2"].status == "no-link"  # every lane is monitored
    assert [(n.local_port, n.system_name, n.port_id) for n in sw.neighbors] == [
        ("qsfp56-dd-1-1", "spark01", "enp1s0f0np0")]
    assert sw.lldp_enabled is True


def test_bridge_ports_and_hw_offload(target: Target, emulator: Emulator) -> None:
    import routeros_api

    pool = routeros_api.RouterOsApiPool("127.0.0.1", username=USER, password=PASSWORD,
                                        port=emulator.port, plaintext_login=True)
    api = pool.get_api()
    api.get_resource("/interface/bridge").add(name="bridge1")
    api.get_resource("/interface/bridge/port").add(bridge="bridge1", interface="qsfp56-dd-2-1")
    pool.disconnect()
    sw = collect_facts(target, ["crs804"]).switch
    assert sw is not None
    assert [(b.name, b.ports) for b in sw.bridges] == [("bridge1", ("qsfp56-dd-2-1",))]
    lane = sw.lanes["qsfp56-dd-2-1"]
    assert (lane.bridge, lane.hw_offload) == ("bridge1", True)


def test_every_host_one_batch_each(target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = _fake_sparks(monkeypatch, SPARKS)
    facts = collect_facts(target)
    assert facts.errors == {}
    assert sorted(facts.sparks) == SPARKS and facts.switch is not None
    assert facts.topology == "star4"
    for fake in fakes.values():
        assert len(fake.channels) == 1 and fake.closed
        channel = fake.channels[0]
        assert channel.closed and channel.command.startswith(LOGIN_ENV)
        # the batch itself (every command at once, each waited for), no pty one-liner
        assert "& p0=$!" in channel.command and "\nwait $p0; " in channel.command


def test_unreachable_hosts_are_errors_others_complete(
        tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_sparks(monkeypatch, ["spark01", "spark03", "spark04"])  # spark02: port 1, refused
    inv = write_inventory(tmp_path / "inv")
    wrong = "not-the-Passw0rd"
    creds = Credentials(ssh_user="root", known_hosts=tmp_path / "kh", routeros_user=USER,
                        routeros_password=wrong, routeros_port=emulator.port)
    from .helpers import star4

    facts = collect_facts(Target(star4(), inv, creds))
    assert sorted(facts.sparks) == ["spark01", "spark03", "spark04"]
    assert set(facts.errors) == {"spark02", "crs804"}
    assert facts.errors["spark02"] == "ssh 127.0.0.1:1: connection refused (is sshd running?)"
    assert "invalid user name or password" in facts.errors["crs804"]
    assert wrong not in json.dumps(facts.errors)


def test_unknown_host_is_bad_input(target: Target) -> None:
    from fabric.errors import InputError

    with pytest.raises(InputError, match="spark09"):
        collect_facts(target, ["spark09"])


@pytest.mark.parametrize(("exc", "expected"), [
    (__import__("netmiko").NetmikoAuthenticationException("Authentication to device failed."),
     "ssh X: authentication failed (key or user rejected)"),
    (__import__("paramiko").SSHException("Server '[198.18.2.2]:22' not found in known_hosts"),
     "ssh X: unknown host key (the server is not in known_hosts)"),
    (__import__("netmiko").NetmikoTimeoutException(
        "\nA paramiko SSHException occurred during connection creation:\n\n"
        "Host key for server '198.18.2.1' does not match: got 'AAAA', expected 'BBBB'\n"),
     "ssh X: host key mismatch (the server's key is not the one in known_hosts)"),
    (__import__("netmiko").ReadTimeout("Pattern not detected"),
     "ssh X: the command batch did not finish in time"),
    (AuthFailed("Authentication to 198.18.1.1:22 failed: Authentication failed."),
     "ssh X: authentication failed (key or user rejected)"),
    (ConnectFailed("TCP connection to 198.18.1.1:22 failed: [Errno 113] No route to host"),
     "ssh X: TCP connection failed (no route, refused or timed out)"),
    (ScriptTimeout("remote script did not finish within 30 s"),
     "ssh X: the command batch did not finish in time"),
])
def test_failure_reasons(exc: BaseException, expected: str) -> None:
    assert describe_failure(exc, "ssh X") == expected


def test_cli_json_to_stdout_and_exit_codes(
        tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    inv = write_inventory(tmp_path / "inv")
    monkeypatch.setenv("FABRIC_ROUTEROS_USER", USER)
    monkeypatch.setenv("FABRIC_ROUTEROS_PASSWORD", PASSWORD)
    monkeypatch.setenv("FABRIC_ROUTEROS_PORT", str(emulator.port))
    code, out, err = run_cli(["facts", "-i", str(inv), "-t", "star4", "--hosts", "crs804"],
                             capsys)
    assert code == 0, err
    assert facts_from_json(out).switch is not None  # JSON on stdout without --json
    assert "crs804" in err and PASSWORD not in out + err
    path = tmp_path / "f.json"
    code, out, err = run_cli(["facts", "-i", str(inv), "-t", "star4", "--hosts",
                              "crs804,spark02", "--json", str(path)], capsys)
    assert code == 3
    assert "spark02: ssh 127.0.0.1:1: connection refused" in err
    recorded = facts_from_json(path.read_text())
    assert list(recorded.errors) == ["spark02"] and recorded.switch is not None


def _in_bursts(fakes: dict[str, FakeNetmiko]) -> dict[str, FakeNetmiko]:
    """The fakes answering a burst (`fabric.remote.burst`) with the transcript as its facts
    job, and a plain batch with the transcript."""
    for fake in fakes.values():
        plain = fake.reply

        def reply(command: str, stdin: bytes, plain: Any = plain) -> tuple[int, str]:
            rc, out = plain(command, stdin)
            if f"'{MARK} begin {collect.FACTS}'" not in command:
                return rc, out
            return 0, f"{MARK} begin {collect.FACTS}\n{out}\n{MARK} end {collect.FACTS} exit=0\n"

        fake.reply = reply
    return fakes


def test_facts_read_behind_the_probes(target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ConnectionWork.behind`: each Spark's burst carries only the rows the probes need first
    (the RDMA map and GIDs), the rest of its batch runs on a second channel of the same
    session, the switch is read in a thread, and `finish` gives the whole facts."""
    fakes = _in_bursts(_fake_sparks(monkeypatch, SPARKS))
    whole = collect_facts(target)
    for fake in fakes.values():
        fake.channels.clear()
    nr = collect.make_nornir(target, None)
    try:
        early, collected = collect.gather_facts(target, nornir=nr,
                                                work=collect.ConnectionWork(behind=True))
        assert early.switch is None and sorted(early.sparks) == SPARKS
        assert all(len(fake.channels) == 1 for fake in fakes.values())  # not started yet
        for got in collected.values():
            assert got.rest is not None
            got.rest.start()
        for host, fake in fakes.items():
            burst, rest = (c.command for c in fake.channels)
            assert "begin show_gids" in burst and "begin ethtool:" not in burst
            assert "begin show_gids" not in rest and "begin ethtool:" in rest
            assert early.sparks[host].ethtool == {}  # not read yet
            assert early.sparks[host].gids == whole.sparks[host].gids
        done = collect.finish(target, early, collected)
    finally:
        nr.close_connections()
    assert done.errors == {} and done.switch is not None
    assert done.sparks == whole.sparks


def test_a_host_whose_facts_behind_fail_is_an_error(
        target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = _in_bursts(_fake_sparks(monkeypatch, SPARKS))
    broken = fakes["spark02"]
    opened = broken.open_session

    class Dropped(FakeChannel):
        def recv(self, size: int) -> bytes:
            raise EOFError("session dropped")

    def second_channel_drops(timeout: float) -> FakeChannel:
        if not broken.channels:
            return opened(timeout)
        channel = Dropped(broken.reply)
        broken.channels.append(channel)
        return channel

    monkeypatch.setattr(broken, "open_session", second_channel_drops)
    nr = collect.make_nornir(target, None)
    try:
        early, collected = collect.gather_facts(target, nornir=nr,
                                                work=collect.ConnectionWork(behind=True))
        done = collect.finish(target, early, collected)
    finally:
        nr.close_connections()
    assert sorted(done.sparks) == ["spark01", "spark03", "spark04"]
    assert set(done.errors) == {"spark02"} and "session dropped" in done.errors["spark02"]


def _two_rests(on_read: Callable[[str], None]) -> dict[str, Any]:
    """Hosts "good" and "bad" with a rest read behind: reading calls `on_read(name)`, then
    gives the name, or ("bad") raises."""
    from fabric.collect.gather import Behind, CollectedHost, StageOutput

    def begin(name: str) -> Any:
        def wait() -> Any:
            on_read(name)
            if name == "bad":
                raise OSError(f"{name} went away")
            return name
        return lambda: wait

    return {n: CollectedHost(None, StageOutput("t"), rest=Behind(begin(n)))
            for n in ("good", "bad")}


def _assert_read(hosts: dict[str, Any]) -> None:
    """The good host's rest gives its facts, the bad one's its failure, as `finish` sees."""
    assert hosts["good"].rest.wait() == "good"
    with pytest.raises(OSError, match="bad went away"):
        hosts["bad"].rest.wait()


def test_the_rest_is_read_once_and_settling_waits_for_it() -> None:
    """`settle_behind` (before a bandwidth re-test) waits for every host's rest; `finish`
    then gets the same facts, or the same failure, without reading the host again."""
    from fabric.collect.gather import settle_behind

    reads: list[str] = []
    hosts = _two_rests(reads.append)
    settle_behind(hosts)  # a failure is kept for `finish`, not raised here
    assert sorted(reads) == ["bad", "good"]
    _assert_read(hosts)
    assert sorted(reads) == ["bad", "good"]  # read once each


def test_the_rest_is_read_behind_as_it_comes_back_not_after() -> None:
    """`start_behind` returns at once and its own thread both starts every host's rest and
    reads each as it comes back (failures kept for `finish`): after the caller's work the
    facts are waiting, not still to be built on the caller's thread."""
    from fabric.collect.gather import start_behind

    readers: dict[str, str] = {}
    release = threading.Event()
    done = threading.Semaphore(0)

    def on_read(name: str) -> None:
        release.wait(10)  # the caller's work goes on meanwhile
        readers[name] = threading.current_thread().name
        done.release()

    hosts = _two_rests(on_read)
    start_behind(hosts)
    assert readers == {}  # returned before any rest was read
    release.set()
    assert done.acquire(timeout=10) and done.acquire(timeout=10)
    assert set(readers) == {"good", "bad"}
    assert threading.current_thread().name not in readers.values()
    _assert_read(hosts)
