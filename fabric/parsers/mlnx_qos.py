"""``mlnx_qos -i IFACE`` reader: trust state, DSCP->priority map, PFC and ETS classes."""

from __future__ import annotations

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import MlnxQos, QosTrafficClass, Record
from fabric.parsers.text import blank_shell_echo, find_line, opt, opt_int, text, texts
from fabric.parsers.textfsm_runner import run_template


def _flags(row_value: str) -> tuple[int, ...]:
    return tuple(prio for prio, flag in enumerate(row_value.split()) if flag == "1")


def read_mlnx_qos(kind: str, raw: str) -> list[Record]:
    """One MlnxQos; ``pfc_enabled`` lists the priorities whose PFC flag is 1."""
    rows = run_template(kind, blank_shell_echo(raw, ["mlnx_qos"]))
    if not rows:
        return []
    last = rows[-1]
    if opt(last, "TRUST") is None:
        line_no, line = find_line(raw, "DCBX")
        raise ParseError(kind, line_no, line, "no 'Priority trust state' line")
    dscp = tuple(
        (int(prio), tuple(int(d) for d in codes.split(",") if d))
        for prio, codes in (entry.split(" dscp:") for entry in texts(last, "DSCP_MAP"))
    )
    classes = tuple(
        QosTrafficClass(
            tc=int(text(r, "TC")),
            tsa=text(r, "TSA"),
            bw_percent=opt_int(r, "BW"),
            priorities=tuple(int(p) for p in texts(r, "TC_PRIO")),
        )
        for r in rows
        if opt(r, "TC") is not None
    )
    return [
        MlnxQos(
            dcbx_mode=opt(last, "DCBX"),
            trust=text(last, "TRUST"),
            dscp2prio=dscp,
            pfc_enabled=_flags(text(last, "PFC_ENABLED")),
            pfc_buffer=tuple(int(b) for b in text(last, "PFC_BUFFER").split()),
            cable_len=opt_int(last, "CABLE_LEN"),
            traffic_classes=classes,
        )
    ]


KINDS = (Kind("mlnx_qos", "linux", read_mlnx_qos, "mlnx_qos -i IFACE"),)
