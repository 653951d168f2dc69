"""``iperf3 -J`` reader. A failed run still exits 0 with ``-J``: the ``error`` key says why.

iperf 3.12 repeats keys inside ``start`` (``sock_bufsize``...); the first value is kept.
"""

from __future__ import annotations

from typing import Any

from fabric.parsers.jsonread import JsonView, load_json
from fabric.parsers.kind import Kind
from fabric.parsers.records import Iperf3Result, Record


def read_iperf3(kind: str, raw: str) -> list[Record]:
    """One Iperf3Result; sums are None when the run failed (``error`` set)."""
    view = JsonView(kind, raw)
    data = view.check(load_json(kind, raw, ["iperf3"]), dict, "top level")
    start = view.get(data, "start", dict)
    error = view.opt(data, "error", str)
    test_start = view.opt(start, "test_start", dict, "start") or {}
    connected = view.opt(start, "connected", list, "start") or []
    first: Any = connected[0] if connected else {}
    role = "server" if "accepted_connection" in start else (
        "client" if "connecting_to" in start else None
    )
    end = view.opt(data, "end", dict) or {}
    sent = view.opt(end, "sum_sent", dict, "end")
    received = view.opt(end, "sum_received", dict, "end")
    if error is None and (sent is None or received is None):
        raise view.fail("end.sum_sent", "missing (and no error key)")
    reverse = view.opt(test_start, "reverse", int, "start.test_start")
    return [
        Iperf3Result(
            role=role,
            error=error,
            version=view.opt(start, "version", str, "start"),
            protocol=view.opt(test_start, "protocol", str, "start.test_start"),
            num_streams=view.opt(test_start, "num_streams", int, "start.test_start"),
            reverse=None if reverse is None else bool(reverse),
            local_host=view.opt(first, "local_host", str, "start.connected[0]"),
            remote_host=view.opt(first, "remote_host", str, "start.connected[0]"),
            sent_bps=view.opt(sent, "bits_per_second", float, "end.sum_sent"),
            received_bps=view.opt(received, "bits_per_second", float, "end.sum_received"),
            retransmits=view.opt(sent, "retransmits", int, "end.sum_sent"),
        )
    ]


KINDS = (Kind("iperf3", "linux", read_iperf3, "iperf3 -J", template=False),)
