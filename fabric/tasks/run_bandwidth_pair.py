"""Nornir task: one scheduled bandwidth test, run from its client Spark against its server."""

from __future__ import annotations

from collections.abc import Mapping

from nornir.core.task import Result, Task

from fabric.probes.measure import Measurement, Tool, combined, measurement, run_phase
from fabric.probes.schedule import BandwidthTest, Leg
from fabric.probes.tools import (
    iperf3_client,
    iperf3_server,
    perftest_client,
    perftest_server,
    read_iperf3,
    read_perftest,
)

BASE_PORT = 5201


def run_bandwidth_pair(task: Task, tests: Mapping[str, BandwidthTest], duration_s: float,
                       gids: Mapping[int, Mapping[int, tuple[int, int]]] | None = None,
                       rate: str | None = None) -> Result:
    """Measure this host's test of the round: iperf3 TCP on every twin at once; then, where
    `gids[test][twin]` gives (client, server) RoCE GID indexes, ib_write_bw per twin and on
    both twins at once. Result: list of Measurement (failures carry `error`)."""
    test = tests[task.host.name]
    if task.is_dry_run():
        return Result(host=task.host, result=[], changed=False)
    config = task.nornir.config
    client = task.host.get_connection("netmiko", config)
    server = task.nornir.inventory.hosts[test.server].get_connection("netmiko", config)
    base = BASE_PORT + 10 * test.index
    tcp = Tool("iperf3", lambda leg: iperf3_server(leg.server_addr),
               lambda leg, port: iperf3_client(leg.server_addr, leg.client_addr, port,
                                               duration_s, rate), read_iperf3)
    out: list[Measurement] = []
    for twin, reading in sorted(run_phase(client, server, test, tcp, test.legs, duration_s,
                                          base).items()):
        out.append(measurement(test, "iperf3", twin, reading, duration_s))
    test_gids = (gids or {}).get(test.index, {})
    legs = [leg for leg in test.legs if leg.twin in test_gids]
    if legs:
        rdma = _perftest(test_gids, duration_s)
        for leg in legs:
            reading = run_phase(client, server, test, rdma, [leg], duration_s, base)[leg.twin]
            out.append(measurement(test, "ib_write_bw", leg.twin, reading, duration_s))
        both = combined(run_phase(client, server, test, rdma, legs, duration_s, base))
        out.append(measurement(test, "ib_write_bw", None, both, duration_s))
    return Result(host=task.host, result=out, changed=False)


def _perftest(gids: Mapping[int, tuple[int, int]], duration_s: float) -> Tool:
    def server(leg: Leg) -> str:
        assert leg.server_rdma is not None
        return perftest_server(leg.server_rdma, gids[leg.twin][1], duration_s)

    def client(leg: Leg, port: int) -> str:
        assert leg.client_rdma is not None
        return perftest_client(leg.client_rdma, gids[leg.twin][0], duration_s, leg.server_addr,
                               port)

    return Tool("ib_write_bw", server, client, read_perftest)
