"""perftest readers (ib_write_bw, ib_send_bw, ib_read_bw; ib_*_lat share the same layout).

Bandwidth is normalised to Gb/s (10^9 bit/s). perftest's ``Gb/sec`` (``--report_gbits``) is
already 10^9 bit/s; its ``MB/sec`` is really MiB/s (renamed ``MiB/sec`` in v24.07), so both
are 2^20 bytes/s. Latency rows may have two columns run together (``2465.901216.65``):
perftest prints every latency with two decimals, so numbers are split by that shape.

Errors are records, not exceptions: a run that failed to connect is a valid output of the
tool, and the collector must report *why* (PerftestError.category). Old perftest printed
``... socket connection Unable to init ...`` on one line; newer versions print each message
on its own line; both give the same PerftestError.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import (
    PerftestBandwidth,
    PerftestError,
    PerftestHeader,
    PerftestLatency,
    Record,
)
from fabric.parsers.text import blank_shell_echo, find_line, nothing_found, opt, text, texts
from fabric.parsers.textfsm_runner import Row, run_template

COMMANDS = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat",
            "ib_send_lat", "ib_atomic_bw", "ib_atomic_lat")

#: bits per second per one unit of each printed bandwidth unit, divided by 1e9.
GBPS_PER_UNIT = {"Gb/sec": 1.0, "MB/sec": 2**20 * 8 / 1e9, "MiB/sec": 2**20 * 8 / 1e9}

#: First line of each error -> category. Continuation lines join the error before them.
ERROR_STARTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Couldn't connect to (?P<peer>\S+)"), "connect"),
    (re.compile(r"^Failed to modify QP \d+ to RT[RS]"), "qp_rtr"),
    (re.compile(r"^(?:pp_read_keys|ethernet_read_keys):"), "exchange"),
    (re.compile(r"^Couldn't read remote address"), "exchange"),
    (re.compile(r"^Completion with error"), "completion"),
    (re.compile(r"^Port number \d+ state is"), "port_state"),
    (re.compile(r"^(?:IB device \S+ not found|No IB devices found)"), "no_device"),
)
_ONE_LINE_JOINED = re.compile(r"\s(?=Unable to )")
_HEADER_PAIR = re.compile(r"([A-Za-z][\w*.() -]*?)\s*:\s*(\S+(?: \S+)*)")
_TWO_DECIMALS = re.compile(r"\d+\.\d\d")


def read_perftest(kind: str, raw: str) -> list[Record]:
    """Header, result rows and errors of one perftest run."""
    cleaned = blank_shell_echo(raw, COMMANDS)
    rows = run_template(kind, cleaned)
    if not rows:
        raise nothing_found(kind, raw, "a perftest header or result")
    header = _header(rows)
    results = [_result(kind, raw, row) for row in rows if opt(row, "BYTES")]
    errors = _errors(raw, [e for row in rows for e in texts(row, "ERRORS")])
    if not results and not errors:
        raise nothing_found(kind, raw, "a result row or an error")
    records: list[Record] = [header] if header is not None else []
    return records + results + errors


def _header(rows: Sequence[Row]) -> PerftestHeader | None:
    pairs: list[tuple[str, str]] = []
    for line in (h for row in rows for h in texts(row, "HEADER")):
        pairs.extend((k.strip(), v.strip()) for k, v in _HEADER_PAIR.findall(line))
    addresses = [a for row in rows for a in texts(row, "ADDRESSES")]
    last = rows[-1]
    test = opt(last, "TEST")
    if not pairs and test is None:
        return None
    settings = dict(pairs)
    role = "server" if opt(last, "ROLE_SERVER") else "client" if "TX depth" in settings else None
    gids = _side_gids(addresses)
    return PerftestHeader(
        test=test,
        role=role,
        device=settings.get("Device"),
        qps=_int_or_none(settings.get("Number of qps")),
        connection_type=settings.get("Connection type"),
        mtu_bytes=_int_or_none(settings.get("Mtu", "").removesuffix("[B]")),
        link_type=settings.get("Link type"),
        gid_index=_int_or_none(settings.get("GID index")),
        rdma_cm={"ON": True, "OFF": False}.get(settings.get("rdma_cm QPs", "")),
        local_gid=gids.get("local"),
        remote_gid=gids.get("remote"),
        settings=tuple(pairs),
        warnings=tuple(w for row in rows for w in texts(row, "WARNINGS")),
    )


def _side_gids(addresses: Sequence[str]) -> dict[str, str]:
    gids: dict[str, str] = {}
    side = ""
    for line in addresses:
        if line.startswith(("local", "remote")):
            side = line.split()[0]
        elif side:
            gids.setdefault(side, line.split(":", 1)[1].strip())
    return gids


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _result(kind: str, raw: str, row: Row) -> Record:
    unit = text(row, "UNIT")
    numbers = text(row, "NUMBERS")
    line_no, line = find_line(raw, numbers)
    if (unit == "usec") != kind.endswith("_lat"):
        raise ParseError(kind, line_no, line, f"a {unit} table is not {kind} output")
    if unit == "usec":
        values = [float(v) for v in _TWO_DECIMALS.findall(numbers)]
        if len(values) != 7 or _TWO_DECIMALS.sub("", numbers).strip():
            raise ParseError(kind, line_no, line, "expected 7 latency columns")
        return PerftestLatency(int(text(row, "BYTES")), int(text(row, "ITERATIONS")), *values)
    parts = numbers.split()
    if len(parts) != 3:
        raise ParseError(kind, line_no, line, "expected BW peak, BW average and MsgRate")
    try:
        peak, average, rate = (float(p) for p in parts)
    except ValueError:
        raise ParseError(kind, line_no, line, "not a number") from None
    factor = GBPS_PER_UNIT[unit]
    return PerftestBandwidth(
        bytes=int(text(row, "BYTES")),
        iterations=int(text(row, "ITERATIONS")),
        bw_peak_gbps=round(peak * factor, 6),
        bw_average_gbps=round(average * factor, 6),
        msg_rate_mpps=rate,
        raw_unit=unit,
    )


def _errors(raw: str, lines: Sequence[str]) -> list[Record]:
    messages = [m.strip() for line in lines for m in _ONE_LINE_JOINED.split(line)]
    errors: list[PerftestError] = []
    for message in messages:
        for pattern, category in ERROR_STARTS:
            match = pattern.match(message)
            if match:
                peer = match.groupdict().get("peer")
                line_no, _ = find_line(raw, message)
                errors.append(PerftestError(category, peer, (message,), line_no))
                break
        else:
            if errors:
                last = errors[-1]
                errors[-1] = PerftestError(
                    last.category, last.peer, (*last.messages, message), last.line_no
                )
            else:
                line_no, _ = find_line(raw, message)
                errors.append(PerftestError("other", None, (message,), line_no))
    return list(errors)


# The perftest tools share one output layout; each command is a kind of its own name.
KINDS = (
    *(Kind(f"ib_{verb}_bw", "linux", read_perftest, f"perftest bandwidth (ib_{verb}_bw)")
      for verb in ("write", "send", "read")),
    *(Kind(f"ib_{verb}_lat", "linux", read_perftest, f"perftest latency (ib_{verb}_lat)")
      for verb in ("write", "send", "read")),
)
