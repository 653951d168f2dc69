"""``ping`` reader (iputils), aimed at the MTU probe ``ping -M do -s 8972``.

Three ways a jumbo probe fails, all visible in PingResult: ``local_mtu`` (the local route or
netdev MTU is smaller: ``local error: message too long, mtu=N``), ``path_mtu`` (a router said
``Frag needed and DF set (mtu = N)``), and silent loss (same L2, smaller MTU in the middle:
``received == 0`` with neither MTU field set).
"""

from __future__ import annotations

from fabric.parsers.kind import Kind
from fabric.parsers.records import PingResult, Record
from fabric.parsers.text import blank_shell_echo, opt, opt_int, texts
from fabric.parsers.textfsm_runner import run_template


def read_ping(kind: str, raw: str) -> list[Record]:
    """One PingResult per run."""
    rows = run_template(kind, blank_shell_echo(raw, ["ping"]))
    records: list[Record] = []
    for r in rows:
        loss = opt(r, "LOSS")
        rtt = opt(r, "RTT_AVG")
        records.append(
            PingResult(
                target=opt(r, "TARGET"),
                payload_bytes=opt_int(r, "PAYLOAD"),
                packet_bytes=opt_int(r, "PACKET"),
                transmitted=opt_int(r, "TRANSMITTED"),
                received=opt_int(r, "RECEIVED"),
                errors=opt_int(r, "ERRORS"),
                loss_percent=None if loss is None else float(loss),
                reply_bytes=tuple(int(b) for b in texts(r, "REPLY_BYTES")),
                rtt_avg_ms=None if rtt is None else float(rtt),
                local_mtu=opt_int(r, "LOCAL_MTU"),
                path_mtu=opt_int(r, "PATH_MTU"),
                exit_code=opt_int(r, "EXIT"),
                error=opt(r, "ERROR"),
            )
        )
    return records


KINDS = (Kind("ping", "linux", read_ping, "iputils ping (MTU probe)"),)
