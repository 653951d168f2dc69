"""What `netplan generate` rendered, read: the networkd .network files and NetworkManager
keyfiles, as the devices they configure (`Wanted`). Part of the lab's `netplan apply`
(fabric/lab/host/netplan_shim.py), which loads this file by path when it runs as a script: standard
library only."""

from __future__ import annotations

import fnmatch
import ipaddress
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Wanted:
    """What netplan's generated configuration asks of one device."""

    device: str
    source: str
    mtu: int | None = None
    addresses: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Link:
    """A device as the kernel has it now."""

    name: str
    mtu: int
    mac: str
    up: bool
    ipv4: list[str]


def parse_ini(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of a systemd unit or NetworkManager keyfile, in order (sections
    and keys may repeat, so configparser does not fit)."""
    out: list[tuple[str, str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        key, sep, value = line.partition("=")
        if sep:
            out.append((section, key.strip(), value.strip()))
    return out


def _ipv4(addr: str) -> str | None:
    """`A.B.C.D/P` normalised, or None for IPv6 (the lab applies IPv4 only)."""
    iface = ipaddress.ip_interface(addr.split(",", 1)[0].strip())
    if iface.version != 4:
        return None
    return iface.with_prefixlen


def _matches(names: Sequence[str], macs: Sequence[str], links: dict[str, Link]) -> list[str]:
    found: list[str] = []
    for link in links.values():
        by_name = any(fnmatch.fnmatchcase(link.name, n) for n in names) if names else True
        by_mac = link.mac.lower() in macs if macs else True
        if (names or macs) and by_name and by_mac:
            found.append(link.name)
    # a device named outright that does not exist (yet) is configured once it appears
    absent = [n for n in names if not any(c in n for c in "*?[") and n not in links]
    return found + absent


def read_networkd(directory: Path, links: dict[str, Link]) -> list[Wanted]:
    """The .network files netplan rendered for systemd-networkd."""
    out: list[Wanted] = []
    for path in sorted(directory.glob("*netplan-*.network")):
        entries = parse_ini(path.read_text())
        names = [n for s, k, v in entries if s == "Match" and k == "Name" for n in v.split()]
        macs = [m.lower() for s, k, v in entries if s == "Match" and k == "MACAddress"
                for m in v.split()]
        mtu = next((int(v) for s, k, v in entries if s == "Link" and k == "MTUBytes"), None)
        addrs = [a for s, k, v in entries
                 if (s, k) in (("Network", "Address"), ("Address", "Address"))
                 if (a := _ipv4(v)) is not None]
        notes = []
        if any(s == "Network" and k == "DHCP" and v in ("yes", "ipv4") for s, k, v in entries):
            notes.append("dhcp4 is not emulated by the lab (no DHCP server); no address set")
        if any(s == "Route" for s, _, _ in entries):
            notes.append("routes are not applied by the lab")
        for dev in _matches(names, macs, links):
            out.append(Wanted(dev, str(path), mtu, list(addrs), list(notes)))
    return out


def read_networkmanager(directory: Path, links: dict[str, Link]) -> list[Wanted]:
    """The keyfiles netplan rendered for NetworkManager."""
    out: list[Wanted] = []
    for path in sorted(directory.glob("netplan-*.nmconnection")):
        entries = parse_ini(path.read_text())
        get = {(s, k): v for s, k, v in entries}
        kind = get.get(("connection", "type"), "ethernet")
        name = get.get(("connection", "interface-name"))
        mac = get.get(("ethernet", "mac-address"))
        if kind != "ethernet":
            print(f"netplan apply (lab): {path.name}: {kind} connections are not emulated by "
                  "the lab; skipped", file=sys.stderr)
            continue
        mtu_text = get.get(("ethernet", "mtu"))
        method = get.get(("ipv4", "method"), "auto")
        addrs = [a for s, k, v in entries
                 if s == "ipv4" and k.startswith("address") and k[7:].isdigit()
                 if (a := _ipv4(v)) is not None]
        notes = []
        if method == "auto":
            notes.append("dhcp4 is not emulated by the lab (no DHCP server); no address set")
        if any(s == "ipv4" and k.startswith("route") for s, k, _ in entries):
            notes.append("routes are not applied by the lab")
        devices = _matches([name] if name else [], [mac.lower()] if mac else [], links)
        for dev in devices:
            out.append(Wanted(dev, str(path), int(mtu_text) if mtu_text else None,
                              list(addrs), list(notes)))
    return out
