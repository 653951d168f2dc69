"""Tool output -> typed records, the ntc-templates way.

``parse(kind, raw)`` returns a list of frozen dataclasses from ``fabric.parsers.records``;
``KINDS`` names every kind. Text tools go through TextFSM templates in ``templates/`` (listed
in ``templates/index``), JSON tools through small typed readers. Output that cannot be parsed
raises ``fabric.errors.ParseError`` naming the offending line; nothing is guessed. A kind whose
valid output can be empty (``Kind.empty_ok``) may return ``[]``; every other kind raises on
output that yields no record.

Decisions per kind (details in each reader module's docstring):

- ``empty_ok``: ``lldpcli`` (no neighbors) and ``ip_route`` (``[]``). Nothing else.
- Failures that are valid tool output become records, not exceptions: ``PerftestError``
  (connect, QP to RTR, key exchange, completion, port state, no device; old one-line and new
  multi-line forms give the same record), ``Iperf3Result.error`` (``-J`` exits 0 on errors),
  ``PingResult.local_mtu``/``path_mtu``/``error``, ``NcclWarning``, ``NcclNetSelection``
  with ``transport="Socket"`` (TCP fallback).
- Truncation is a ParseError where the tool promises more: an incomplete perftest row, a
  show_gids ``n_gids_found`` that disagrees with the rows. nccl-tests without its footer is
  accepted (``avg_busbw_GBps`` None) because a killed run still printed valid rows.
- Shell prompts and echoed commands (``user@host:~$ cmd``, ``$ cmd``, ``# cmd``, ``[sudo]``)
  are ignored, so pasted captures parse as they are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fabric.errors import ParseError
from fabric.parsers import (
    chrony,
    counters,
    dmesg,
    ethtool,
    host,
    iperf3,
    iproute,
    iptables,
    lldp,
    mlnx_qos,
    nccl,
    perftest,
    ping,
    rdma,
    routeros,
)
from fabric.parsers.kind import Kind
from fabric.parsers.records import Record
from fabric.parsers.text import nothing_found

_MODULES = (rdma, perftest, ethtool, iproute, ping, iperf3, lldp, chrony, mlnx_qos, nccl,
            routeros, iptables, dmesg, counters, host)

#: Every parser kind by name.
KINDS: dict[str, Kind] = {kind.name: kind for module in _MODULES for kind in module.KINDS}

__all__ = ["KINDS", "Kind", "ParseError", "Record", "parse", "record_to_dict"]


def parse(kind: str, raw: str) -> list[Record]:
    """Parse one tool output of ``kind``; raise ParseError (with the line) if it is not valid."""
    try:
        spec = KINDS[kind]
    except KeyError:
        raise KeyError(f"unknown parser kind {kind!r}; known: {', '.join(sorted(KINDS))}") from None
    records = spec.reader(kind, raw)
    if not records and not spec.empty_ok:
        raise nothing_found(kind, raw, f"any {kind} data")
    return records


def record_to_dict(record: Record) -> dict[str, Any]:
    """A record as plain JSON-able data: ``{"type": <class name>, <fields>...}``."""
    return {"type": type(record).__name__, **_plain(dataclasses.asdict(record))}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
