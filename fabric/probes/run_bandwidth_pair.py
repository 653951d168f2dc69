"""Nornir tasks of the bandwidth schedule: start every iperf3 server a Spark will need (one
batched command per host, before round 1), then run one scheduled test, both ways at once,
from its client."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nornir.core.task import Result, Task

from fabric.probes.measure import (
    Measurement,
    Tool,
    combined,
    iperf3_bidir_client,
    measurement,
    read_clients,
    read_iperf3_bidir,
    run_duplex_phase,
    server_key,
)
from fabric.probes.schedule import BandwidthTest, Leg
from fabric.probes.servers import Server, parse_ports, start_servers_script
from fabric.probes.tools import (
    IPERF3_LISTENING,
    IPERF3_PORT_TAKEN,
    SLACK_S,
    Reading,
    iperf3_bidir_measuring,
    iperf3_client,
    iperf3_server,
    perftest_client,
    perftest_server,
    read_perftest,
)
from fabric.remote.exec import SPARK_SSH, exec_script, spark_session

BASE_PORT = 5201
SERVER_START_TIMEOUT_S = 60.0


def start_bandwidth_servers(task: Task, tests: Sequence[BandwidthTest],
                            life_s: float) -> Result:
    """Start, in the background, one `iperf3 -s -1` per twin of every test this host serves,
    each on a free port, bounded by `timeout life_s`. Result: port per `server_key`."""
    script = servers_script(task.host.name, tests, life_s)
    if script is None or task.is_dry_run():
        return Result(host=task.host, result={}, changed=False)
    conn = spark_session(task)
    _, out = exec_script(conn, script, SERVER_START_TIMEOUT_S)
    return Result(host=task.host, result=parse_ports(out), changed=True)


def servers_script(host: str, tests: Sequence[BandwidthTest], life_s: float) -> str | None:
    """The script that starts every iperf3 server `host` serves in `tests` (None: none)."""
    servers = [Server(server_key(t, leg), iperf3_server(leg.server_addr), life_s,
                      says=IPERF3_LISTENING, busy=IPERF3_PORT_TAKEN)
               for t in tests if t.server == host for leg in t.legs]
    return start_servers_script(servers, BASE_PORT) if servers else None


def run_bandwidth_pair(task: Task, tests: Mapping[str, BandwidthTest], duration_s: float,
                       ports: Mapping[str, int | None],
                       gids: Mapping[int, Mapping[int, tuple[int, int]]] | None = None,
                       rate: str | None = None, peers: Mapping[str, Any] | None = None,
                       tclass: int | None = None,
                       started: Callable[[str], None] | None = None) -> Result:
    """Measure this host's test of the round, both ways at once: iperf3 TCP `--bidir` on every
    twin at once against the servers `ports` names; then, where `gids[test][twin]` gives
    (client, server) RoCE GID indexes, ib_write_bw per twin and on both twins at once, one run
    each way, in the traffic class `tclass` where given (a lossless topology's RoCE class).
    `peers`: inventory hosts by name (the running Nornir is filtered to the clients).
    `started(host)` is called once this host's iperf3 clients are connected, so their tests
    are timed (or once none could be, or they gave up waiting; see `iperf3_bidir_measuring`).
    Result: list of Measurement, each way its own (`reverse`: server -> client)."""
    test = tests[task.host.name]
    if task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    config = task.nornir.config
    client = spark_session(task)
    told = None if started is None else functools.partial(started, task.host.name)
    try:
        tcp = _tcp(client, test, duration_s, ports, rate, told)
    finally:
        if told is not None:
            told()  # also where no client started
    out = _both_ways(test, "iperf3", tcp, duration_s)
    test_gids = (gids or {}).get(test.index, {})
    legs = [leg for leg in test.legs if leg.twin in test_gids]
    if legs:
        server = (peers or task.nornir.inventory.hosts)[test.server].get_connection(
            SPARK_SSH, config)
        there = _perftest(test_gids, duration_s, False, tclass)
        back = _perftest(test_gids, duration_s, True, tclass)
        base = BASE_PORT + 100 + 10 * test.index
        for leg in legs:
            ways = run_duplex_phase(client, server, test, there, back, [leg], duration_s, base)
            out += _both_ways(test, "ib_write_bw", (ways[0], ways[1]), duration_s)
        fwd, rev = run_duplex_phase(client, server, test, there, back, legs, duration_s, base)
        out += [measurement(test, "ib_write_bw", None, combined(readings), duration_s, reverse)
                for reverse, readings in ((False, fwd), (True, rev))]
    return Result(host=task.host, result=out, changed=False)


def _both_ways(test: BandwidthTest, tool: str,
               ways: tuple[dict[int, Reading], dict[int, Reading]],
               duration_s: float) -> list[Measurement]:
    return [measurement(test, tool, twin, reading, duration_s, reverse)
            for reverse, readings in zip((False, True), ways, strict=True)
            for twin, reading in sorted(readings.items())]


def _tcp(client: Any, test: BandwidthTest, duration_s: float, ports: Mapping[str, int | None],
         rate: str | None, on_started: Callable[[], None] | None = None
         ) -> tuple[dict[int, Reading], dict[int, Reading]]:
    forward: dict[int, Reading] = {}
    reverse: dict[int, Reading] = {}
    ready: list[tuple[Leg, int]] = []
    for leg in test.legs:
        port = ports.get(server_key(test, leg))
        if port is None:
            forward[leg.twin] = reverse[leg.twin] = Reading(
                None, f"iperf3 server on {test.server} {leg.server_addr} did not listen")
        else:
            ready.append((leg, port))
    commands = [iperf3_bidir_client(iperf3_client(leg.server_addr, leg.client_addr, port,
                                                  duration_s, rate))
                for leg, port in ready]
    running = iperf3_bidir_measuring(len(commands)) if on_started else None
    for twin, (there, back) in read_clients(client, ready, commands, read_iperf3_bidir,
                                            duration_s + 2 * SLACK_S, on_started,
                                            running).items():
        forward[twin], reverse[twin] = there, back
    return forward, reverse


def _perftest(gids: Mapping[int, tuple[int, int]], duration_s: float, reverse: bool,
              tclass: int | None = None) -> Tool:
    """ib_write_bw one way; `reverse`: the legs are reversed (the test's server sends), so
    the GID indexes swap sides."""
    mine, theirs = (1, 0) if reverse else (0, 1)

    def server(leg: Leg) -> str:
        assert leg.server_rdma is not None
        return perftest_server(leg.server_rdma, gids[leg.twin][theirs], duration_s, tclass)

    def client(leg: Leg, port: int) -> str:
        assert leg.client_rdma is not None
        return perftest_client(leg.client_rdma, gids[leg.twin][mine], duration_s,
                               leg.server_addr, port, tclass)

    return Tool("ib_write_bw", server, client, read_perftest)
