"""dmesg reader: one KernelEvent per line, with driver, PCI/ACPI id and netdev when present."""

from __future__ import annotations

from fabric.parsers.kind import Kind
from fabric.parsers.records import KernelEvent, Record
from fabric.parsers.text import blank_shell_echo, opt, text
from fabric.parsers.textfsm_runner import run_template


def read_dmesg(kind: str, raw: str) -> list[Record]:
    """KernelEvents in log order (hotplug, link up/down, PCIe bandwidth, power)."""
    rows = run_template(kind, blank_shell_echo(raw, ["dmesg"]))
    return [
        KernelEvent(
            timestamp=text(r, "TIMESTAMP").strip("[] "),
            driver=opt(r, "DRIVER"),
            bus_id=opt(r, "BUS_ID"),
            device=opt(r, "NETDEV"),
            message=text(r, "MESSAGE"),
        )
        for r in rows
    ]


KINDS = (Kind("dmesg", "linux", read_dmesg, "dmesg [-T] kernel log lines"),)
