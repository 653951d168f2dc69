"""NCCL readers: nccl-tests result tables and ``NCCL_DEBUG=INFO`` network selection.

nccl-tests: new versions print ``root`` and ``#wrong`` columns, old ones ``error`` and no
``root`` (root is then None). Bandwidths are GB/s (10^9 bytes/s) as the tool prints them.
A run whose footer is missing (truncated) keeps ``avg_busbw_GBps`` None.

nccl_info is deliberately lenient: an NCCL log is interleaved with any program's output. It
returns one NcclNetSelection per ``NET/<transport> : Using ...`` line and one NcclWarning per
``NCCL WARN`` line; a log with neither is a ParseError.
"""

from __future__ import annotations

import re

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import (
    NcclNetDevice,
    NcclNetSelection,
    NcclTestRow,
    NcclTestSummary,
    NcclWarning,
    Record,
)
from fabric.parsers.text import (
    blank_shell_echo,
    find_line,
    nothing_found,
    opt,
    opt_int,
    text,
    texts,
)
from fabric.parsers.textfsm_runner import Row, run_template


def read_nccl_tests(kind: str, raw: str) -> list[Record]:
    """NcclTestSummary then one NcclTestRow per message size."""
    rows = run_template(kind, blank_shell_echo(raw, ["mpirun", "cd"]))
    results = [r for r in rows if opt(r, "SIZE")]
    if not results:
        raise nothing_found(kind, raw, "an nccl-tests result row")
    last = rows[-1]
    summary = NcclTestSummary(
        version=opt(last, "VERSION"),
        collective=opt(last, "COLLECTIVE"),
        ranks=tuple(rank for r in rows for rank in texts(r, "RANKS")),
        out_of_bounds=next((int(v) for r in rows if (v := opt(r, "OUT_OF_BOUNDS"))), None),
        avg_busbw_GBps=next((_num(kind, raw, v) for r in rows if (v := opt(r, "AVG_BUSBW"))),
                            None),
    )
    return [summary, *(_row(kind, raw, r) for r in results)]


def _num(kind: str, raw: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        line_no, line = find_line(raw, value)
        raise ParseError(kind, line_no, line, f"{value!r} is not a number") from None


def _row(kind: str, raw: str, r: Row) -> NcclTestRow:
    def num(key: str) -> float:
        return _num(kind, raw, text(r, key))

    return NcclTestRow(
        size_bytes=int(text(r, "SIZE")),
        count=int(text(r, "COUNT")),
        dtype=text(r, "TYPE"),
        redop=text(r, "REDOP"),
        root=opt_int(r, "ROOT"),
        oop_time_us=num("OOP_TIME"),
        oop_algbw_GBps=num("OOP_ALGBW"),
        oop_busbw_GBps=num("OOP_BUSBW"),
        oop_wrong=text(r, "OOP_WRONG"),
        ip_time_us=num("IP_TIME"),
        ip_algbw_GBps=num("IP_ALGBW"),
        ip_busbw_GBps=num("IP_BUSBW"),
        ip_wrong=text(r, "IP_WRONG"),
    )


_PREFIX = r"^(?:(?P<host>[^\s:]*):\d+:\d+\s+\[\d+\]\s+)?"
_USING = re.compile(_PREFIX + r"NCCL INFO NET/(?P<transport>\w+)\s*: Using (?P<rest>.*)$")
_WARN = re.compile(r"^(?:(?P<host>[^\s:]*):\d+:\d+\s+\[\d+\]\s+\S*\s*)?.*?NCCL WARN (?P<msg>.*)$")
_IB_DEV = re.compile(r"\[(?P<index>\d+)\]\s?(?P<name>[^\s:\[\]={},]+):(?P<port>\d+)/(?P<ll>\w+)")
_SOCK_DEV = re.compile(r"\[(?P<index>\d+)\](?P<name>[^\s:\[\]]+):(?P<addr>[^\s<]+)<\d+>")
_MERGED = re.compile(r"\[(?P<virtual>\d+)\]=\{(?P<members>[^}]*)\}")
_OOB = re.compile(r";\s*OOB\s+(?P<iface>[^\s:]+):(?P<addr>[^\s<]+)")


def read_nccl_info(kind: str, raw: str) -> list[Record]:
    """NET transport selections and NCCL WARN lines from an ``NCCL_DEBUG=INFO`` log."""
    records: list[Record] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        using = _USING.match(line)
        if using:
            records.append(_selection(kind, number, line, using))
            continue
        warn = _WARN.match(line)
        if warn and "WARN" in line:
            records.append(NcclWarning(warn["host"] or None, warn["msg"].strip(), number))
    if not records:
        raise nothing_found(kind, raw, "an NCCL 'NET/... : Using' or 'NCCL WARN' line")
    return records


def _selection(kind: str, number: int, line: str, using: re.Match[str]) -> NcclNetSelection:
    transport = using["transport"]
    rest = using["rest"]
    devices: list[NcclNetDevice] = []
    if transport == "Socket":
        for m in _SOCK_DEV.finditer(rest):
            devices.append(NcclNetDevice(int(m["index"]), m["name"], None, None, m["addr"], None))
    else:
        merged = list(_MERGED.finditer(rest))
        groups: list[tuple[int | None, str]] = [
            (int(m["virtual"]), m["members"]) for m in merged
        ] or [(None, rest)]
        for virtual, members in groups:
            for m in _IB_DEV.finditer(members):
                devices.append(
                    NcclNetDevice(int(m["index"]), m["name"], int(m["port"]), m["ll"], None,
                                  virtual)
                )
    if not devices:
        raise ParseError(kind, number, line, "NET 'Using' line lists no device")
    oob = _OOB.search(rest)
    return NcclNetSelection(
        host=using["host"] or None,
        transport="IB" if transport.startswith("IB") else transport,
        devices=tuple(devices),
        relaxed_ordering="[RO]" in rest,
        oob_interface=oob["iface"] if oob else None,
        oob_address=oob["addr"] if oob else None,
        line_no=number,
    )


KINDS = (
    Kind("nccl_tests", "linux", read_nccl_tests, "nccl-tests *_perf result table"),
    Kind("nccl_info", "linux", read_nccl_info, "NCCL_DEBUG=INFO NET selection and WARN lines",
         template=False),
)
