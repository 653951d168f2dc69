"""Command lines and result readers for the bandwidth tools (iperf3 TCP, ib_write_bw)."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.errors import ParseError
from fabric.parsers import parse
from fabric.parsers.records import Iperf3Result, PerftestBandwidth, PerftestError
from fabric.remote.batch import JobOutput

#: Seconds a client may take beyond the test duration (connect, warm-up, JSON out).
SLACK_S = 15.0


@dataclass(frozen=True)
class Reading:
    """What one client run measured: Gb/s, or why not."""

    gbps: float | None
    error: str | None


#: What an iperf3 server prints right after it listens (`iperf_server_listen`); with
#: `--forceflush` it reaches a file at once, so the start-up waits for it there.
IPERF3_LISTENING = "Server listening on"
#: What an iperf3 server prints (then exits) when its port is taken (strerror(EADDRINUSE)).
IPERF3_PORT_TAKEN = "Address already in use"
#: The sockets an `iperf3 --bidir` client holds once it is connected to its server, so its
#: test is timed from then: the control connection and a stream each way.
IPERF3_BIDIR_SOCKETS = 3

#: `fabric_sockets PID LEVEL`: adds to `$c` the sockets PID holds, and those of its children
#: down to LEVEL 2 (a job's subshell, its `timeout`, the tool), found in /proc by the shell's
#: own `read` and `test -S` (no process started: a batch polls it while its clients start).
_SOCKETS = """\
fabric_sockets() { for f in /proc/$1/fd/*; do [ -S "$f" ] && c=$((c+1)); done
[ "$2" -ge 2 ] && return 0; k=; read -r k 2>/dev/null </proc/$1/task/$1/children
for x in $k; do fabric_sockets "$x" $(($2 + 1)); done; }"""


def iperf3_bidir_measuring(clients: int) -> str:
    """A shell condition for a batch's `ready` (`fabric.remote.batch.batch_script`): its jobs
    (`$fabric_jobs`), `clients` `iperf3 --bidir` clients, are all connected to their
    servers, so their tests are timed from now."""
    return (f"{{ {_SOCKETS}; c=0; for j in $fabric_jobs; do fabric_sockets $j 0; done; "
            f"[ $c -ge {IPERF3_BIDIR_SOCKETS * clients} ]; }}")


def iperf3_server(bind: str) -> str:
    return f"iperf3 -s -1 -p {{port}} -B {bind} --forceflush"


def iperf3_client(server: str, bind: str, port: int, duration_s: float,
                  rate: str | None = None) -> str:
    cap = f" -b {rate}" if rate else ""
    return (f"timeout {duration_s + SLACK_S:g} iperf3 -c {server} -B {bind} -p {port} -J "
            f"-t {duration_s:g} --connect-timeout 3000{cap}")


def _tclass(tclass: int | None) -> str:
    """`--tclass N`: the IP ToS byte of the test's RoCE packets (None: perftest's DSCP 0,
    priority 0, the lossy queue)."""
    return "" if tclass is None else f" --tclass {tclass}"


def perftest_server(rdma: str, gid: int, duration_s: float, tclass: int | None = None) -> str:
    return (f"ib_write_bw -d {rdma} -x {gid} -F --report_gbits -D {duration_s:g}"
            f"{_tclass(tclass)} -p {{port}}")


def perftest_client(rdma: str, gid: int, duration_s: float, server: str, port: int,
                    tclass: int | None = None) -> str:
    return (f"timeout {duration_s + SLACK_S:g} ib_write_bw -d {rdma} -x {gid} -F "
            f"--report_gbits -D {duration_s:g}{_tclass(tclass)} -p {port} {server}")


def read_iperf3(job: JobOutput) -> Reading:
    """Receiver-side Gb/s of an ``iperf3 -J`` client run; the ``error`` key means failure."""
    if job.exit_code is None:
        return Reading(None, "no output came back")
    try:
        records = parse("iperf3", job.text)
    except ParseError as exc:
        tail = job.text.strip().splitlines()[-1:] or [f"exit {job.exit_code}"]
        return Reading(None, f"iperf3 exited {job.exit_code}: {tail[0][:200]} ({exc.reason})")
    result = next(r for r in records if isinstance(r, Iperf3Result))
    if result.error is not None:
        return Reading(None, f"iperf3: {result.error}")
    bps = result.received_bps if result.received_bps is not None else result.sent_bps
    if bps is None:
        return Reading(None, "iperf3: no throughput in the result")
    return Reading(round(bps / 1e9, 3), None)


def read_perftest(job: JobOutput) -> Reading:
    """Average Gb/s of an ib_write_bw client run, or its error (category and message)."""
    if job.exit_code is None:
        return Reading(None, "no output came back")
    try:
        records = parse("ib_write_bw", job.text)
    except ParseError as exc:
        return Reading(None, f"ib_write_bw exited {job.exit_code}: {exc.reason}")
    errors = [r for r in records if isinstance(r, PerftestError)]
    rows = [r for r in records if isinstance(r, PerftestBandwidth)]
    if errors:
        e = errors[0]
        return Reading(None, f"ib_write_bw {e.category}: {' '.join(e.messages)}"[:300])
    if not rows:
        return Reading(None, "ib_write_bw: no result row")
    return Reading(round(rows[-1].bw_average_gbps, 3), None)
