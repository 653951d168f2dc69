"""One bandwidth test over two SSH sessions, both ways at once.

A phase starts one server per twin and way (free port each, background, bounded by
`timeout`): for the client -> server way on the server host, for the way back on the client
host. Then it runs each way's clients of all its twins at once in one batched command, both
hosts at the same time, and reads each result. ``iperf3 --bidir`` does both ways in one run;
its reader returns a reading per way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from fabric.errors import ParseError
from fabric.intent.wire import Crossing
from fabric.parsers.jsonread import load_json
from fabric.probes.schedule import BandwidthTest, Leg
from fabric.probes.servers import Server, parse_ports, start_servers_script
from fabric.probes.tools import SLACK_S, Reading, read_iperf3
from fabric.remote.batch import JobOutput, exec_batch
from fabric.remote.exec import exec_script

SERVER_START_TIMEOUT_S = 30.0

R = TypeVar("R")


@dataclass(frozen=True)
class Measurement:
    """One tool phase of one test on one twin (twin None: both twins at once, summed), one
    way: client -> server, or server -> client when `reverse`."""

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
    reverse: bool = False
    crossings: tuple[Crossing, ...] = ()  # the cables and directions this way ran through

    @property
    def src(self) -> str:
        """The host that sent."""
        return self.server if self.reverse else self.client

    @property
    def dst(self) -> str:
        """The host that received."""
        return self.client if self.reverse else self.server


@dataclass(frozen=True)
class Tool:
    """How to run one tool one way: server and client command per leg, the result reader."""

    name: str
    server: Callable[[Leg], str]
    client: Callable[[Leg, int], str]
    read: Callable[[JobOutput], Reading]


def iperf3_bidir_client(command: str) -> str:
    """An ``iperf3 -c`` command line made to send both ways at once (iperf3 >= 3.7)."""
    return f"{command} --bidir"


def read_iperf3_bidir(job: JobOutput) -> tuple[Reading, Reading]:
    """Receiver-side Gb/s of an ``iperf3 --bidir -J`` client run: (client -> server,
    server -> client). The first is ``end.sum_received`` (the streams whose ``sender`` is the
    client), the second ``end.sum_received_bidir_reverse``; a failed run fails both ways."""
    forward = read_iperf3(job)
    if forward.error is not None:
        return forward, forward
    try:
        data = load_json("iperf3", job.text, ["iperf3"])
    except ParseError as exc:  # read_iperf3 parsed it already; kept for the type checker
        return forward, Reading(None, f"iperf3: {exc.reason}")
    end = data.get("end") if isinstance(data, dict) else None
    back = (end or {}).get("sum_received_bidir_reverse") or (end or {}).get(
        "sum_sent_bidir_reverse")
    bps = back.get("bits_per_second") if isinstance(back, dict) else None
    if not isinstance(bps, (int, float)) or isinstance(bps, bool):
        return forward, Reading(None, "iperf3: no reverse way in the result (--bidir needs "
                                      "iperf3 3.7 or newer)")
    return forward, Reading(round(bps / 1e9, 3), None)


def run_duplex_phase(client: Any, server: Any, test: BandwidthTest, forward: Tool,
                     backward: Tool, legs: Sequence[Leg], duration_s: float, base_port: int
                     ) -> tuple[dict[int, Reading], dict[int, Reading]]:
    """Readings per twin of `legs`, both ways at once: `forward` from the client host to
    servers on the server host, `backward` from the server host to servers on the client."""
    back = [leg.reversed() for leg in legs]
    fwd_ready, fwd = start_phase_servers(server, test.server, forward, legs, duration_s,
                                         base_port)
    rev_ready, rev = start_phase_servers(client, test.client, backward, back, duration_s,
                                         base_port)
    timeout = duration_s + 2 * SLACK_S
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(read_clients, server, rev_ready,
                            [backward.client(leg, port) for leg, port in rev_ready],
                            backward.read, timeout)
        fwd.update(read_clients(client, fwd_ready,
                                [forward.client(leg, port) for leg, port in fwd_ready],
                                forward.read, timeout))
        rev.update(later.result())
    return fwd, rev


def start_phase_servers(conn: Any, host: str, tool: Tool, legs: Sequence[Leg],
                        duration_s: float, base_port: int
                        ) -> tuple[list[tuple[Leg, int]], dict[int, Reading]]:
    """Start one `tool` server per leg on `host`: (legs with their port, error readings of
    the legs whose server did not listen)."""
    servers = [Server(str(leg.twin), tool.server(leg), duration_s + 2 * SLACK_S) for leg in legs]
    _, out = exec_script(conn, start_servers_script(servers, base_port), SERVER_START_TIMEOUT_S)
    ports = parse_ports(out)
    failed: dict[int, Reading] = {}
    ready: list[tuple[Leg, int]] = []
    for leg in legs:
        port = ports.get(str(leg.twin))
        if port is None:
            tail = out.strip().splitlines()[-1:] or ["no output"]
            failed[leg.twin] = Reading(None, f"{tool.name} server on {host} "
                                             f"{leg.server_addr} did not listen: {tail[0]}")
        else:
            ready.append((leg, port))
    return ready, failed


def read_clients(client: Any, ready: Sequence[tuple[Leg, int]], commands: Sequence[str],
                 read: Callable[[JobOutput], R], timeout_s: float,
                 on_started: Callable[[], None] | None = None,
                 running: str | None = None) -> dict[int, R]:
    """Run the client `commands` (one per ready leg) at once in one batch; reading per twin.
    `on_started()`: once the host has started the clients, and (`running`, a shell
    condition) once that holds on the host too (`fabric.remote.batch.batch_script`)."""
    if not commands:
        return {}
    outputs = exec_batch(client, commands, timeout_s, on_started=on_started, ready=running)
    return {leg.twin: read(job) for (leg, _), job in zip(ready, outputs, strict=True)}


def server_key(test: BandwidthTest, leg: Leg) -> str:
    """How a pre-started server is named: `<test index>.<twin>`."""
    return f"{test.index}.{leg.twin}"


def measurement(test: BandwidthTest, tool: str, twin: int | None, reading: Reading,
                duration_s: float, reverse: bool = False) -> Measurement:
    return Measurement(test.index, test.round, test.client, test.server, test.links, tool, twin,
                       reading.gbps, reading.error, duration_s, reverse,
                       test.crossings(reverse))


def combined(readings: dict[int, Reading]) -> Reading:
    """Both twins at once: the sum, or the errors."""
    errors = [f"twin {'AB'[t]}: {r.error}" for t, r in sorted(readings.items()) if r.error]
    if errors:
        return Reading(None, "; ".join(errors))
    return Reading(round(sum(r.gbps or 0.0 for r in readings.values()), 3), None)
