"""ethtool readers: settings, driver info (-i), counters (-S) and FEC (--show-fec)."""

from __future__ import annotations

import re

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import (
    EthtoolCounter,
    EthtoolDriver,
    EthtoolFec,
    EthtoolPause,
    EthtoolSettings,
    Record,
)
from fabric.parsers.text import blank_shell_echo, find_line, opt, opt_int, text, texts
from fabric.parsers.textfsm_runner import run_template

_ECHO = ["ethtool"]
_PSID = re.compile(r"^(?P<version>\S+)\s+\((?P<psid>[^)]+)\)$")
_YES_NO = {"yes": True, "no": False, "on": True, "off": False}


def read_ethtool(kind: str, raw: str) -> list[Record]:
    """``ethtool IFACE`` or a grep of it: one EthtoolSettings; ``Unknown!`` speed/duplex -> None."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    records: list[Record] = []
    for row in rows:
        speed = opt(row, "SPEED")
        speed_mbps = int(speed.removesuffix("Mb/s")) if speed and speed[0].isdigit() else None
        records.append(
            EthtoolSettings(
                interface=opt(row, "INTERFACE"),
                speed_mbps=speed_mbps,
                lanes=opt_int(row, "LANES"),
                duplex=None if text(row, "DUPLEX") == "Unknown!" else opt(row, "DUPLEX"),
                auto_negotiation=_YES_NO.get(text(row, "AUTONEG")),
                port=opt(row, "PORT"),
                link_detected=_YES_NO.get(text(row, "LINK")),
                supported_link_modes=tuple(texts(row, "SUPPORTED_MODES")),
                advertised_link_modes=tuple(texts(row, "ADVERTISED_MODES")),
            )
        )
    return records


def read_ethtool_i(kind: str, raw: str) -> list[Record]:
    """``ethtool -i``: firmware ``28.39.3560 (MT_0000000838)`` splits into version and PSID."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    records: list[Record] = []
    for row in rows:
        firmware = opt(row, "FIRMWARE")
        psid = None
        if firmware is not None:
            match = _PSID.match(firmware)
            if match:
                firmware, psid = match["version"], match["psid"]
            elif " " in firmware:
                line_no, line = find_line(raw, "firmware-version")
                raise ParseError(kind, line_no, line, "firmware-version is not 'X' or 'X (PSID)'")
        records.append(
            EthtoolDriver(
                driver=text(row, "DRIVER"),
                version=opt(row, "VERSION"),
                firmware_version=firmware,
                psid=psid,
                bus_info=opt(row, "BUS_INFO"),
            )
        )
    return records


def read_ethtool_s(kind: str, raw: str) -> list[Record]:
    """``ethtool -S`` (or a grep of it): one EthtoolCounter per line, in output order."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    return [EthtoolCounter(name=text(r, "NAME"), value=int(text(r, "VALUE"))) for r in rows]


def read_ethtool_fec(kind: str, raw: str) -> list[Record]:
    """``ethtool --show-fec``: configured encodings and the active one (``None`` = no FEC)."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    return [
        EthtoolFec(
            interface=text(r, "INTERFACE"),
            configured=tuple(text(r, "CONFIGURED").split()),
            active=text(r, "ACTIVE"),
        )
        for r in rows
    ]


def read_ethtool_a(kind: str, raw: str) -> list[Record]:
    """``ethtool -a``: autonegotiation and RX/TX pause per interface (the negotiated lines
    and ``--include-statistics`` counters are accepted, not kept)."""
    rows = run_template(kind, blank_shell_echo(raw, _ECHO))
    return [EthtoolPause(interface=text(r, "INTERFACE"), autoneg=text(r, "AUTONEG") == "on",
                         rx=text(r, "RX") == "on", tx=text(r, "TX") == "on") for r in rows]


KINDS = (
    Kind("ethtool", "linux", read_ethtool, "ethtool IFACE (speed, lanes, link)"),
    Kind("ethtool_i", "linux", read_ethtool_i, "ethtool -i (driver, firmware, PSID)"),
    Kind("ethtool_S", "linux", read_ethtool_s, "ethtool -S counters"),
    Kind("ethtool_fec", "linux", read_ethtool_fec, "ethtool --show-fec"),
    Kind("ethtool_a", "linux", read_ethtool_a, "ethtool -a (pause parameters)"),
)
