"""LLDPDUs (IEEE 802.1AB): parse a received frame's TLVs, and build frames (tests, fake kernel).

A frame is the Ethernet header (destination, source, ethertype 0x88cc) and the LLDPDU: TLVs of a
16-bit header (7-bit type, 9-bit length) and a body. The first three are chassis id, port id and
TTL, in that order; the End TLV (or the end of the data) closes it. Organisation-specific (127)
and unknown TLVs are skipped. Anything malformed raises ``LldpError`` (a ``ValueError``).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

ETH_P_LLDP = 0x88CC
#: The nearest-bridge group address lldpd (and RouterOS) send to.
LLDP_MULTICAST = "01:80:C2:00:00:0E"

TLV_END, TLV_CHASSIS_ID, TLV_PORT_ID, TLV_TTL = 0, 1, 2, 3
TLV_PORT_DESCR, TLV_SYSTEM_NAME, TLV_SYSTEM_DESCR, TLV_MGMT_ADDRESS = 4, 5, 6, 8
TLV_ORG = 127
#: chassis id subtypes that carry a MAC / a network address / text
CHASSIS_MAC, CHASSIS_NETWORK = 4, 5
#: port id subtypes
PORT_MAC, PORT_NETWORK, PORT_IFNAME, PORT_LOCAL = 3, 4, 5, 7
#: IANA address families (network-address subtypes, management address TLV)
FAMILY_IPV4, FAMILY_IPV6 = 1, 2
_ETH_HEADER = 14


class LldpError(ValueError):
    """A frame that is not a well-formed LLDPDU."""


@dataclass(frozen=True)
class Lldpdu:
    """One LLDPDU's contents; ids are printable (MACs upper-case, addresses as IPs)."""

    chassis_subtype: int
    chassis_id: str
    port_subtype: int
    port_id: str
    ttl: int
    port_description: str = ""
    system_name: str = ""
    system_description: str = ""
    management_addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class LldpFrame:
    """A received frame: its source MAC and LLDPDU."""

    source_mac: str
    lldpdu: Lldpdu


def format_mac(data: bytes) -> str:
    return ":".join(f"{b:02X}" for b in data)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _address(family: int, data: bytes) -> str | None:
    if family == FAMILY_IPV4 and len(data) == 4:
        return str(ipaddress.IPv4Address(data))
    if family == FAMILY_IPV6 and len(data) == 16:
        return str(ipaddress.IPv6Address(data))
    return None


def _identifier(body: bytes, mac: int, network: int) -> tuple[int, str]:
    """(subtype, printable id) of a chassis or port id TLV body."""
    if not 2 <= len(body) <= 256:
        raise LldpError(f"id TLV of {len(body)} bytes")
    subtype, value = body[0], body[1:]
    if subtype == mac and len(value) == 6:
        return subtype, format_mac(value)
    if subtype == network and len(value) >= 2:
        addr = _address(value[0], value[1:])
        if addr is not None:
            return subtype, addr
    text = _text(value)
    if text.isprintable():
        return subtype, text
    return subtype, "0x" + value.hex()


def _management_address(body: bytes) -> str | None:
    """The address of a management address TLV (None: a family other than IPv4/IPv6)."""
    if len(body) < 2 or not 2 <= body[0] <= 32 or len(body) < 1 + body[0]:
        raise LldpError("bad management address TLV")
    return _address(body[1], body[2 : 1 + body[0]])


def tlvs(data: bytes) -> list[tuple[int, bytes]]:
    """The (type, body) pairs up to the End TLV or the end of ``data``."""
    out: list[tuple[int, bytes]] = []
    pos = 0
    while pos + 2 <= len(data):
        (header,) = struct.unpack_from("!H", data, pos)
        kind, length = header >> 9, header & 0x1FF
        pos += 2
        if pos + length > len(data):
            raise LldpError(f"TLV {kind} runs past the frame")
        if kind == TLV_END:
            return out
        out.append((kind, data[pos : pos + length]))
        pos += length
    if pos != len(data):
        raise LldpError("trailing byte after the last TLV")
    return out


def parse_lldpdu(data: bytes) -> Lldpdu:
    """The LLDPDU in ``data`` (the frame's payload, after the ethertype)."""
    items = tlvs(data)
    if [kind for kind, _ in items[:3]] != [TLV_CHASSIS_ID, TLV_PORT_ID, TLV_TTL]:
        raise LldpError("an LLDPDU starts with chassis id, port id and TTL")
    chassis_subtype, chassis_id = _identifier(items[0][1], CHASSIS_MAC, CHASSIS_NETWORK)
    port_subtype, port_id = _identifier(items[1][1], PORT_MAC, PORT_NETWORK)
    if len(items[2][1]) < 2:
        raise LldpError("TTL TLV shorter than 2 bytes")
    (ttl,) = struct.unpack_from("!H", items[2][1])
    texts = {TLV_PORT_DESCR: "", TLV_SYSTEM_NAME: "", TLV_SYSTEM_DESCR: ""}
    addresses: list[str] = []
    for kind, body in items[3:]:
        if kind in (TLV_CHASSIS_ID, TLV_PORT_ID, TLV_TTL):
            raise LldpError(f"mandatory TLV {kind} repeated")
        if kind in texts:
            texts[kind] = _text(body)
        elif kind == TLV_MGMT_ADDRESS:
            addr = _management_address(body)
            if addr is not None:
                addresses.append(addr)
    return Lldpdu(chassis_subtype, chassis_id, port_subtype, port_id, ttl,
                  texts[TLV_PORT_DESCR], texts[TLV_SYSTEM_NAME], texts[TLV_SYSTEM_DESCR],
                  tuple(addresses))  # fmt: skip


def parse_frame(frame: bytes) -> LldpFrame:
    """An Ethernet frame of ethertype 0x88cc (as an AF_PACKET SOCK_RAW socket reads it)."""
    if len(frame) < _ETH_HEADER:
        raise LldpError("shorter than an Ethernet header")
    (ethertype,) = struct.unpack_from("!H", frame, 12)
    if ethertype != ETH_P_LLDP:
        raise LldpError(f"ethertype 0x{ethertype:04x}")
    return LldpFrame(format_mac(frame[6:12]), parse_lldpdu(frame[_ETH_HEADER:]))


# --- building (the fake kernel and tests) ------------------------------------------------------


def tlv(kind: int, body: bytes) -> bytes:
    if len(body) > 0x1FF:
        raise LldpError(f"TLV {kind} body of {len(body)} bytes")
    return struct.pack("!H", kind << 9 | len(body)) + body


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", "").replace("-", ""))


def _address_bytes(text: str) -> tuple[int, bytes]:
    addr = ipaddress.ip_address(text)
    return (FAMILY_IPV4 if addr.version == 4 else FAMILY_IPV6), addr.packed


def build_lldpdu(
    chassis_mac: str,
    port_id: str,
    ttl: int = 120,
    *,
    system_name: str = "",
    system_description: str = "",
    port_description: str = "",
    management_address: str = "",
    port_subtype: int = PORT_IFNAME,
) -> bytes:
    """An LLDPDU as lldpd sends it (chassis id: a MAC; port id: an ifname by default)."""
    out = tlv(TLV_CHASSIS_ID, bytes([CHASSIS_MAC]) + mac_bytes(chassis_mac))
    pid = mac_bytes(port_id) if port_subtype == PORT_MAC else port_id.encode()
    out += tlv(TLV_PORT_ID, bytes([port_subtype]) + pid)
    out += tlv(TLV_TTL, struct.pack("!H", ttl))
    for kind, text in ((TLV_PORT_DESCR, port_description), (TLV_SYSTEM_NAME, system_name),
                       (TLV_SYSTEM_DESCR, system_description)):  # fmt: skip
        if text:
            out += tlv(kind, text.encode())
    if management_address:
        family, packed = _address_bytes(management_address)
        body = bytes([1 + len(packed), family]) + packed + bytes([2]) + struct.pack("!I", 0)
        out += tlv(TLV_MGMT_ADDRESS, body + b"\x00")
    return out + tlv(TLV_END, b"")


def build_frame(source_mac: str, lldpdu: bytes) -> bytes:
    """An Ethernet frame to the LLDP multicast address, padded to the 60-byte minimum."""
    frame = mac_bytes(LLDP_MULTICAST) + mac_bytes(source_mac) + struct.pack("!H", ETH_P_LLDP)
    frame += lldpdu
    return frame + bytes(max(0, 60 - len(frame)))
