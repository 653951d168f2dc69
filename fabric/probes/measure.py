"""One bandwidth test over two SSH sessions: servers on one Spark, clients on the other.

A phase starts one server per twin (free port each, background, bounded by `timeout`), then
runs the clients of all its twins at once in one batched command, and reads each result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fabric.probes.batch import JobOutput, batch_script, split_batch
from fabric.probes.schedule import BandwidthTest, Leg
from fabric.probes.servers import Server, parse_ports, start_servers_script
from fabric.probes.tools import SLACK_S, Reading
from fabric.tasks.remote_exec import exec_script

SERVER_START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Measurement:
    """One tool phase of one test on one twin (twin None: both twins at once, summed)."""

    test: int
    round: int
    client: str
    server: str
    links: tuple[str, ...]
    tool: str
    twin: int | None
    gbps: float | None
    error: str | None
    duration_s: float


@dataclass(frozen=True)
class Tool:
    """How to run one tool: server and client command per leg, and the result reader."""

    name: str
    server: Callable[[Leg], str]
    client: Callable[[Leg, int], str]
    read: Callable[[JobOutput], Reading]


def run_phase(client: Any, server: Any, test: BandwidthTest, tool: Tool, legs: Sequence[Leg],
              duration_s: float, base_port: int) -> dict[int, Reading]:
    """Readings per twin for `legs` measured at once with `tool`."""
    servers = [Server(str(leg.twin), tool.server(leg), duration_s + 2 * SLACK_S) for leg in legs]
    _, out = exec_script(server, start_servers_script(servers, base_port), SERVER_START_TIMEOUT_S)
    ports = parse_ports(out)
    readings: dict[int, Reading] = {}
    ready: list[tuple[Leg, int]] = []
    for leg in legs:
        port = ports.get(str(leg.twin))
        if port is None:
            tail = out.strip().splitlines()[-1:] or ["no output"]
            readings[leg.twin] = Reading(None, f"{tool.name} server on {test.server} "
                                               f"{leg.server_addr} did not listen: {tail[0]}")
        else:
            ready.append((leg, port))
    commands = [tool.client(leg, port) for leg, port in ready]
    readings.update(read_clients(client, ready, commands, tool.read, duration_s + 2 * SLACK_S))
    return readings


def read_clients(client: Any, ready: Sequence[tuple[Leg, int]], commands: Sequence[str],
                 read: Callable[[JobOutput], Reading], timeout_s: float) -> dict[int, Reading]:
    """Run the client `commands` (one per ready leg) at once in one batch; reading per twin."""
    if not commands:
        return {}
    _, out = exec_script(client, batch_script(commands), timeout_s)
    return {leg.twin: read(job)
            for (leg, _), job in zip(ready, split_batch(out, len(commands)), strict=True)}


def server_key(test: BandwidthTest, leg: Leg) -> str:
    """How a pre-started server is named: `<test index>.<twin>`."""
    return f"{test.index}.{leg.twin}"


def measurement(test: BandwidthTest, tool: str, twin: int | None, reading: Reading,
                duration_s: float) -> Measurement:
    return Measurement(test.index, test.round, test.client, test.server, test.links, tool, twin,
                       reading.gbps, reading.error, duration_s)


def combined(readings: dict[int, Reading]) -> Reading:
    """Both twins at once: the sum, or the errors."""
    errors = [f"twin {'AB'[t]}: {r.error}" for t, r in sorted(readings.items()) if r.error]
    if errors:
        return Reading(None, "; ".join(errors))
    return Reading(round(sum(r.gbps or 0.0 for r in readings.values()), 3), None)
