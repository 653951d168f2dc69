"""Nornir tasks of the bandwidth schedule: start every iperf3 server a Spark will need (one
batched command per host, before round 1), then run one scheduled test from its client."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nornir.core.task import Result, Task

from fabric.probes.measure import (
    Tool,
    combined,
    measurement,
    read_clients,
    run_phase,
    server_key,
)
from fabric.probes.schedule import BandwidthTest, Leg
from fabric.probes.servers import Server, parse_ports, start_servers_script
from fabric.probes.tools import (
    SLACK_S,
    Reading,
    iperf3_client,
    iperf3_server,
    perftest_client,
    perftest_server,
    read_iperf3,
    read_perftest,
)
from fabric.tasks.remote_exec import exec_script

BASE_PORT = 5201
SERVER_START_TIMEOUT_S = 60.0


def start_bandwidth_servers(task: Task, tests: Sequence[BandwidthTest],
                            life_s: float) -> Result:
    """Start, in the background, one `iperf3 -s -1` per twin of every test this host serves,
    each on a free port, bounded by `timeout life_s`. Result: port per `server_key`."""
    servers = [Server(server_key(t, leg), iperf3_server(leg.server_addr), life_s)
               for t in tests if t.server == task.host.name for leg in t.legs]
    if not servers or task.is_dry_run():
        return Result(host=task.host, result={}, changed=False)
    conn = task.host.get_connection("netmiko", task.nornir.config)
    _, out = exec_script(conn, start_servers_script(servers, BASE_PORT), SERVER_START_TIMEOUT_S)
    return Result(host=task.host, result=parse_ports(out), changed=True)


def run_bandwidth_pair(task: Task, tests: Mapping[str, BandwidthTest], duration_s: float,
                       ports: Mapping[str, int | None],
                       gids: Mapping[int, Mapping[int, tuple[int, int]]] | None = None,
                       rate: str | None = None, peers: Mapping[str, Any] | None = None
                       ) -> Result:
    """Measure this host's test of the round: iperf3 TCP on every twin at once against the
    servers `ports` names; then, where `gids[test][twin]` gives (client, server) RoCE GID
    indexes, ib_write_bw per twin and on both twins at once. `peers`: inventory hosts by name
    (the running Nornir is filtered to the clients). Result: list of Measurement."""
    test = tests[task.host.name]
    if task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    config = task.nornir.config
    client = task.host.get_connection("netmiko", config)
    out = [measurement(test, "iperf3", twin, reading, duration_s)
           for twin, reading in sorted(_tcp(client, test, duration_s, ports, rate).items())]
    test_gids = (gids or {}).get(test.index, {})
    legs = [leg for leg in test.legs if leg.twin in test_gids]
    if legs:
        server = (peers or task.nornir.inventory.hosts)[test.server].get_connection(
            "netmiko", config)
        rdma = _perftest(test_gids, duration_s)
        base = BASE_PORT + 100 + 10 * test.index
        for leg in legs:
            reading = run_phase(client, server, test, rdma, [leg], duration_s, base)[leg.twin]
            out.append(measurement(test, "ib_write_bw", leg.twin, reading, duration_s))
        both = combined(run_phase(client, server, test, rdma, legs, duration_s, base))
        out.append(measurement(test, "ib_write_bw", None, both, duration_s))
    return Result(host=task.host, result=out, changed=False)


def _tcp(client: Any, test: BandwidthTest, duration_s: float, ports: Mapping[str, int | None],
         rate: str | None) -> dict[int, Reading]:
    readings: dict[int, Reading] = {}
    ready: list[tuple[Leg, int]] = []
    for leg in test.legs:
        port = ports.get(server_key(test, leg))
        if port is None:
            readings[leg.twin] = Reading(None, f"iperf3 server on {test.server} "
                                               f"{leg.server_addr} did not listen")
        else:
            ready.append((leg, port))
    commands = [iperf3_client(leg.server_addr, leg.client_addr, port, duration_s, rate)
                for leg, port in ready]
    readings.update(read_clients(client, ready, commands, read_iperf3,
                                 duration_s + 2 * SLACK_S))
    return readings


def _perftest(gids: Mapping[int, tuple[int, int]], duration_s: float) -> Tool:
    def server(leg: Leg) -> str:
        assert leg.server_rdma is not None
        return perftest_server(leg.server_rdma, gids[leg.twin][1], duration_s)

    def client(leg: Leg, port: int) -> str:
        assert leg.client_rdma is not None
        return perftest_client(leg.client_rdma, gids[leg.twin][0], duration_s, leg.server_addr,
                               port)

    return Tool("ib_write_bw", server, client, read_perftest)
