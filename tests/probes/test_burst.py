"""One burst per Spark: the scripts run side by side in one exec channel (a real shell here),
each output and exit status comes back whole; the ping burst's retries; the servers' start."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from fabric.intent.model import Intent
from fabric.probes.facts_burst import (
    COUNTERS,
    NCCL,
    PING,
    SERVERS,
    FactsBurstProbes,
    ProbeOptions,
)
from fabric.probes.ping import RETRY_MARK, PingProbe, ping_fact
from fabric.probes.servers import TRIES, Server, parse_ports, start_servers_script
from fabric.probes.tools import IPERF3_LISTENING, IPERF3_PORT_TAKEN
from fabric.remote.batch import MARK
from fabric.remote.burst import Script, exec_burst, split_burst
from fabric.remote.exec import LOGIN_ENV
from tests.remote.helpers import FakeSession


def test_scripts_run_side_by_side_and_come_back_whole(tmp_path: Path) -> None:
    """The second script waits for a file the first writes: both finish only because they
    run at the same time; each output (a last line without newline too) and exit status
    comes back whole, from one exec channel."""
    go = tmp_path / "go"
    session = FakeSession()
    scripts = [
        Script("first", f"echo one; touch {go}; printf 'no newline'", 10, login=True),
        Script("second", f"i=0; until [ -e {go} ]; do i=$((i+1)); [ $i -gt 500 ] && exit 9; "
               "sleep 0.01; done; echo two; exit 3", 10),
        Script("third", "exit 0", 10),
    ]
    outs = exec_burst(session, scripts)
    assert [(o.name, o.rc, o.output, o.value) for o in outs][1:] == [
        ("second", 3, "two\n", None), ("third", 0, "", None)]
    assert [(o.name, o.rc, o.output) for o in outs] == [
        ("first", 0, "one\nno newline\n"), ("second", 3, "two\n"), ("third", 0, "")]
    [channel] = session.channels
    assert channel.command.count(LOGIN_ENV) == 1


def test_a_cut_burst_gives_the_missing_scripts_no_status() -> None:
    scripts = [Script("a", "", 1), Script("b", "", 1)]
    outs = split_burst(scripts, f"{MARK} begin a\nx\n\n{MARK} end a exit=0\n"
                                f"{MARK} begin b\npartial\n")
    assert [(o.rc, o.output) for o in outs] == [(0, "x\n"), (None, "")]


def _probe(payload: int = 8972) -> PingProbe:
    return PingProbe("spark01", "va", "spark02", "vb", "198.18.9.2", payload, "l1")


LOST = ("PING 198.18.9.2 (198.18.9.2) from 198.18.9.1 va: 8972(9000) bytes of data.\n\n"
        "--- 198.18.9.2 ping statistics ---\n"
        "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n")
GOT = ("PING 198.18.9.2 (198.18.9.2) from 198.18.9.1 va: 8972(9000) bytes of data.\n"
       "8980 bytes from 198.18.9.2: icmp_seq=1 ttl=64 time=0.051 ms\n\n"
       "--- 198.18.9.2 ping statistics ---\n"
       "1 packets transmitted, 1 received, 0% packet loss, time 0ms\n"
       "rtt min/avg/max/mdev = 0.051/0.051/0.051/0.000 ms\n")


def test_a_lost_first_echo_answered_by_a_retry_passes_with_every_packet_counted() -> None:
    fact = ping_fact(_probe(), LOST + f"{RETRY_MARK}\n" + GOT, 0)
    assert (fact.sent, fact.received, fact.error) == (2, 1, None)


def test_three_lost_echoes_are_a_lost_probe() -> None:
    out = LOST + f"{RETRY_MARK}\n" + LOST + f"{RETRY_MARK}\n" + LOST
    fact = ping_fact(_probe(), out, 1)
    assert (fact.sent, fact.received, fact.error) == (3, 0, None)


def test_a_local_error_is_kept_from_every_try() -> None:
    err = ("PING 198.18.9.2 (198.18.9.2) from 198.18.9.1 va: 8972(9000) bytes of data.\n"
           "ping: local error: message too long, mtu=1500\n\n"
           "--- 198.18.9.2 ping statistics ---\n"
           "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n")
    fact = ping_fact(_probe(), err + f"{RETRY_MARK}\n" + err, 1)
    assert fact.received == 0 and fact.error == "local error: message too long, mtu=1500"


def _server(key: str, listen: bool) -> Server:
    code = ("import socket, sys, time; s = socket.socket(); "
            "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(3)"
            if listen else "import sys; sys.exit(1)")
    return Server(key, f'{sys.executable} -c "{code}" {{port}}', 5)


HOLD_A_LOW_PORT = """
import socket, time
s = socket.socket()
for port in range(20000, 30000, 10):
    try:
        s.bind(("127.0.0.1", port))
        break
    except OSError:
        continue
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(30)
"""


@contextlib.contextmanager
def _a_taken_port() -> Iterator[int]:
    """A port a holder process keeps listening on, below the kernel's ephemeral range (32768
    up), so no other test's outgoing connection holds one of the ports the servers move on to
    (the suite runs tests side by side)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_A_LOW_PORT], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None
        yield int(holder.stdout.readline())
    finally:
        holder.kill()
        holder.wait()


def _servers_at(script: str, tmp: Path, env: dict[str, str] | None = None
                ) -> dict[str, int | None]:
    """Run a servers script (its temporary files under `tmp`): the ports it reported."""
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30,
                          check=False, env={**(env or os.environ), "TMPDIR": str(tmp)})
    return parse_ports(done.stdout)


def _started(make: Callable[[str, bool], Server], tmp: Path
             ) -> tuple[str, int, dict[str, int | None]]:
    """Start a listening, a dead and another listening server from a taken port: (the
    script, that port, the ports it reported)."""
    with _a_taken_port() as taken:
        script = start_servers_script([make("0.0", True), make("0.1", False),
                                       make("1.0", True)], taken)
        return script, taken, _servers_at(script, tmp)


def test_servers_start_at_once_on_free_ports_and_a_dead_one_is_not_waited_for(
        tmp_path: Path) -> None:
    script, taken, ports = _started(_server, tmp_path)
    assert ports["0.1"] is None  # exited at once: reported, not waited 5 s for
    assert ports["0.0"] is not None and ports["1.0"] is not None
    assert taken not in ports.values() and ports["0.0"] != ports["1.0"]
    assert script.count("ss -Hltn") == 1  # one listing function, not one per port


def _saying(key: str, listen: bool, busy: str | None = None) -> Server:
    """A server that prints a line once it listens (as `iperf3 --forceflush` does), or one
    that exits at once without a word; with `busy`, one that prints the error of a taken port
    (as iperf3 does) and exits."""
    code = ("import socket, sys, time; s = socket.socket()\n"
            "try: s.bind(('127.0.0.1', int(sys.argv[1])))\n"
            "except OSError as e: print('error -', e.strerror, flush=True); sys.exit(1)\n"
            "s.listen(); print('Server listening on', sys.argv[1], flush=True); time.sleep(3)"
            if listen else "import sys; sys.exit(1)")
    return Server(key, f'{sys.executable} -c "{code}" {{port}}', 5, says="Server listening on",
                  busy=busy)


def test_servers_that_say_they_listen_are_watched_through_their_output(tmp_path: Path) -> None:
    """No `ss` after the first look (each one walks the kernel's listening hash): the script
    waits for each server's own line, reports a dead one at once and leaves no files."""
    script, taken, ports = _started(_saying, tmp_path)
    assert ports["0.1"] is None
    assert ports["0.0"] is not None and ports["1.0"] is not None
    assert taken not in ports.values() and ports["0.0"] != ports["1.0"]
    assert script.count("$(listening)") == 1  # the free ports only
    assert "grep" not in script  # each look is the shell's own `read`
    assert list(tmp_path.iterdir()) == []  # the output files' names are gone


def _logged_ss(tmp: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `ss` logs each call (then runs the real one), and the log."""
    real = shutil.which("ss", path="/usr/sbin:/usr/bin:/sbin:/bin")
    assert real is not None, "ss (iproute2) is needed"
    bindir, log = tmp / "bin", tmp / "ss-calls"
    bindir.mkdir()
    (bindir / "ss").write_text(f'#!/bin/sh\necho "$*" >>{log}\nexec {real} "$@"\n')
    (bindir / "ss").chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}, log


def test_servers_that_say_their_port_is_taken_list_the_ports_only_then(tmp_path: Path) -> None:
    """Servers that say when their port is taken start without a look at the ports; the
    first that finds its port taken lists them (`ss`, once) and starts on the next one
    free, so the others never wait a poll per taken port."""
    work = tmp_path / "work"
    work.mkdir()
    env, log = _logged_ss(tmp_path)
    busy = "Address already in use"
    make = [_saying("0.0", True, busy), _saying("0.1", False, busy), _saying("1.0", True, busy)]
    with _a_taken_port() as taken:
        for base in (taken + 100, taken):  # first nothing taken, then the first port
            ports = _servers_at(start_servers_script(make, base), work, env)
            assert ports["0.1"] is None  # dead without a word: not retried
            assert ports["0.0"] is not None and ports["1.0"] is not None
            assert taken not in ports.values() and ports["0.0"] != ports["1.0"]
            calls = log.read_text().splitlines() if log.exists() else []
            assert len(calls) == (0 if base != taken else 1), calls
    assert list(work.iterdir()) == []


def test_a_server_gives_up_after_its_tries(tmp_path: Path) -> None:
    """A server that finds every port taken is tried on `TRIES` ports, one after the other,
    and reported as failed."""
    tried = tmp_path / "tried"
    always_busy = Server("0.0", f"sh -c 'echo $0 >>{tried}; echo error - Address already in "
                         "use; exit 1' {port}", 5, says="Server listening on",
                         busy="Address already in use")
    assert _servers_at(start_servers_script([always_busy], 20000), tmp_path) == {"0.0": None}
    ports = [int(p) for p in tried.read_text().split()]
    # each try on a new port, up from the base (past those the one listing shows taken)
    assert len(ports) == TRIES and ports[0] == 20000 and ports == sorted(set(ports))


def test_iperf3_servers_flush_the_line_they_are_watched_for(intents: dict[str, Intent]) -> None:
    """A validation's iperf3 servers print their listening line at once (`--forceflush`; to a
    file it would wait in stdio's buffer until the server exits), and are watched for it."""
    intent = intents["star4"]
    work = FactsBurstProbes(intent, ProbeOptions(bandwidth=True),
                            [h.name for h in intent.sparks]).work()
    [servers] = [sc for sc in work.scripts["spark02"] if sc.name == SERVERS]
    assert servers.text.count("iperf3 -s -1 ") == servers.text.count("--forceflush") > 0
    assert f"fabric_says '{IPERF3_LISTENING}'" in servers.text
    assert f"fabric_says '{IPERF3_PORT_TAKEN}'" in servers.text  # the next port if taken
    # the ports are listed only once one is taken, and then once (`listed`)
    assert "used=; listed=" in servers.text
    assert servers.text.index(IPERF3_PORT_TAKEN) < servers.text.index("$(listening)")
    assert servers.text.count("$(listening)") == servers.text.count(IPERF3_PORT_TAKEN)
    # the words watched for are the C locale's, whatever the login's LANG
    assert servers.text.index("export LC_ALL=C") < servers.text.index("iperf3 -s")


def test_early_probes_ride_with_the_facts(intents: dict[str, Intent]) -> None:
    intent = intents["star4"]
    sparks = [h.name for h in intent.sparks]
    plain = FactsBurstProbes(intent, ProbeOptions(ping=True, bandwidth=True, nccl=True), sparks)
    beside = plain.work()
    assert not beside.has_first  # no counters: nothing has to come first
    assert beside.scripts is not None
    assert [s.name for s in beside.scripts["spark01"]] == [PING, SERVERS, NCCL]
    assert beside.behind  # bandwidth rounds follow: the facts are read behind them
    counted = FactsBurstProbes(intent, ProbeOptions(ping=True, bandwidth=True, counters=True),
                               sparks).work()
    assert counted.first_scripts is not None and counted.scripts is not None
    # the counters' "before" snapshot first, everywhere, with what sends nothing on the
    # fabric (the servers); the pings only after it
    assert [s.name for s in counted.first_scripts["spark01"]] == [COUNTERS, SERVERS]
    assert [s.name for s in counted.scripts["spark01"]] == [PING]
    only_mtu = FactsBurstProbes(intent, ProbeOptions(ping=True, bandwidth=False), sparks).work()
    assert only_mtu.scripts is not None
    assert [s.name for s in only_mtu.scripts["spark01"]] == [PING]
    assert not only_mtu.behind  # no rounds to hide the facts behind: read with the pings


def test_a_script_is_read_where_it_ran() -> None:
    """`read` turns a script's output into its value as the burst comes back."""
    outs = exec_burst(FakeSession(), [Script("n", "echo 41", 5, read=lambda o: int(o) + 1)])
    assert outs[0].value == 42
