"""``chronyc tracking`` reader."""

from __future__ import annotations

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import ChronyTracking, Record
from fabric.parsers.text import blank_shell_echo, find_line, opt, text
from fabric.parsers.textfsm_runner import run_template


def read_chronyc_tracking(kind: str, raw: str) -> list[Record]:
    """ChronyTracking; ``system_time_offset_s`` is positive when the system clock is fast."""
    rows = run_template(kind, blank_shell_echo(raw, ["chronyc"]))
    records: list[Record] = []
    for r in rows:
        missing = [k for k in ("STRATUM", "SYSTEM_OFFSET", "LAST_OFFSET", "RMS_OFFSET") if not
                   opt(r, k)]
        if missing:
            line_no, line = find_line(raw, "Leap status")
            raise ParseError(kind, line_no, line, f"tracking block lacks {', '.join(missing)}")
        offset = float(text(r, "SYSTEM_OFFSET"))
        if text(r, "SYSTEM_DIRECTION") == "slow":
            offset = -offset or 0.0
        records.append(
            ChronyTracking(
                reference_id=text(r, "REF_ID"),
                reference_name=opt(r, "REF_NAME"),
                stratum=int(text(r, "STRATUM")),
                system_time_offset_s=offset,
                last_offset_s=float(text(r, "LAST_OFFSET")),
                rms_offset_s=float(text(r, "RMS_OFFSET")),
                leap_status=text(r, "LEAP"),
            )
        )
    return records


KINDS = (Kind("chronyc_tracking", "linux", read_chronyc_tracking, "chronyc tracking"),)
