"""The emulator's LLDP receiver logic without a kernel: TLV parsing, the neighbour table's
ageing and TTLs, durations, rtnetlink link events and the per-name link history."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.lab.routeros.clock import format_duration, format_gmt_offset, time_zone_name
from fabric.lab.routeros.discovery import NeighborTable
from fabric.lab.routeros.lldp import (
    PORT_LOCAL,
    PORT_MAC,
    LldpError,
    build_frame,
    build_lldpdu,
    parse_frame,
    parse_lldpdu,
)
from fabric.lab.routeros.netlink import (
    IFF_LOWER_UP,
    IFF_RUNNING,
    IFF_UP,
    RTM_DELLINK,
    LinkEvent,
    LinkHistory,
    LinkTimes,
    done_message,
    newlink_message,
    parse_datagram,
)
from fabric.lab.routeros.observed import Observations

SPARK_MAC = "02:AA:00:00:00:01"


def tlv(kind: int, body: bytes) -> bytes:
    """A TLV written out by hand (type in the top 7 bits, length in the low 9)."""
    return struct.pack("!H", (kind << 9) | len(body)) + body


def ether(payload: bytes, src: bytes = bytes.fromhex("02aa00000001")) -> bytes:
    return bytes.fromhex("0180c200000e") + src + b"\x88\xcc" + payload


#: What lldpd on a Spark sends (hand-built): MAC chassis, ifname port, TTL, port/system
#: descriptions, system name, capabilities (7), IPv4 and IPv6 management addresses,
#: an organisation-specific TLV (127), End, then Ethernet padding.
LLDPD_FRAME = ether(
    tlv(1, b"\x04" + bytes.fromhex("02aa00000001"))
    + tlv(2, b"\x05enp1s0f0np0")
    + tlv(3, struct.pack("!H", 120))
    + tlv(5, b"spark01")
    + tlv(6, b"Ubuntu 24.04.1 LTS Linux 6.11.0-1016-nvidia")
    + tlv(7, b"\x00\x9c\x00\x14")
    + tlv(8, b"\x05\x01" + bytes([198, 18, 0, 11]) + b"\x02\x00\x00\x00\x02\x00")
    + tlv(8, b"\x11\x02" + bytes.fromhex("fd00" + "00" * 13 + "0b") + b"\x02\x00\x00\x00\x02\x00")
    + tlv(4, b"enp1s0f0np0")
    + tlv(127, b"\x00\x12\x0f\x01\x03\x6c\x00\x00\x10")
    + tlv(0, b"")
    + bytes(20)
)


def test_parses_what_lldpd_sends() -> None:
    frame = parse_frame(LLDPD_FRAME)
    d = frame.lldpdu
    assert frame.source_mac == SPARK_MAC
    assert (d.chassis_subtype, d.chassis_id) == (4, SPARK_MAC)
    assert (d.port_subtype, d.port_id, d.ttl) == (5, "enp1s0f0np0", 120)
    assert (d.system_name, d.port_description) == ("spark01", "enp1s0f0np0")
    assert d.system_description == "Ubuntu 24.04.1 LTS Linux 6.11.0-1016-nvidia"
    assert d.management_addresses == ("198.18.0.11", "fd00::b")


def test_port_id_subtypes_and_a_text_chassis() -> None:
    local = parse_lldpdu(tlv(1, b"\x07crs804") + tlv(2, b"\x07port-7") + tlv(3, b"\x00\x78"))
    assert (local.chassis_subtype, local.chassis_id) == (7, "crs804")
    assert (local.port_subtype, local.port_id) == (PORT_LOCAL, "port-7")
    mac = parse_lldpdu(tlv(1, b"\x04" + bytes(range(6))) + tlv(2, b"\x03" + bytes(range(6)))
                       + tlv(3, b"\x00\x78"))  # no End TLV: the data ends it
    assert (mac.port_subtype, mac.port_id) == (PORT_MAC, "00:01:02:03:04:05")
    binary = parse_lldpdu(tlv(1, b"\x01\x00\xff") + tlv(2, b"\x07x") + tlv(3, b"\x00\x01"))
    assert binary.chassis_id == "0x00ff"


def test_builder_and_parser_agree() -> None:
    raw = build_frame(SPARK_MAC, build_lldpdu(SPARK_MAC, "enP2p1s0f0np0", 90,
                                              system_name="spark02",
                                              management_address="198.18.0.12"))
    assert len(raw) >= 60
    d = parse_frame(raw).lldpdu
    assert (d.port_id, d.ttl, d.system_name, d.management_addresses) == (
        "enP2p1s0f0np0", 90, "spark02", ("198.18.0.12",))


MANDATORY = tlv(1, b"\x04" + bytes(6)) + tlv(2, b"\x05p") + tlv(3, b"\x00\x78")


@pytest.mark.parametrize("payload", [
    b"",  # nothing
    tlv(2, b"\x05p") + tlv(1, b"\x04" + bytes(6)) + tlv(3, b"\x00\x78"),  # out of order
    tlv(1, b"\x04" + bytes(6)) + tlv(2, b"\x05p"),  # no TTL
    tlv(1, b"\x04") + tlv(2, b"\x05p") + tlv(3, b"\x00\x78"),  # an empty chassis id
    tlv(1, b"\x04" + bytes(6)) + tlv(2, b"\x05p") + tlv(3, b"\x00"),  # a 1-byte TTL
    MANDATORY + tlv(1, b"\x04" + bytes(6)),  # chassis id twice
    MANDATORY + b"\x0a\x10abc",  # a TLV that runs past the frame
    MANDATORY + b"\x0a",  # half a TLV header
    MANDATORY + tlv(8, b"\x40\x01\x01"),  # management address longer than its TLV
])
def test_malformed_lldpdus_are_errors(payload: bytes) -> None:
    with pytest.raises(LldpError):
        parse_lldpdu(payload)


def test_malformed_frames_are_errors_and_ignored_by_the_receiver() -> None:
    obs = Observations(lambda: 100.0)
    for frame in (b"\x01\x02", ether(b"")[:-2] + b"\x08\x00" + MANDATORY, ether(b"\x02\x00")):
        with pytest.raises(LldpError):
            parse_frame(frame)
        assert obs.hear("qsfp56-dd-1-1", frame) is False
    assert obs.observed().neighbors == ()
    assert obs.hear("qsfp56-dd-1-1", LLDPD_FRAME) is True


@given(st.binary(max_size=200))
def test_no_payload_crashes_the_parser(payload: bytes) -> None:
    with contextlib.suppress(LldpError):
        parse_frame(ether(payload))


@given(st.binary(min_size=1, max_size=40), st.integers(0, len(LLDPD_FRAME) - 1))
def test_a_corrupted_lldpd_frame_is_parsed_or_refused(junk: bytes, at: int) -> None:
    with contextlib.suppress(LldpError):
        parse_frame(LLDPD_FRAME[:at] + junk + LLDPD_FRAME[at + len(junk):])


# --- the table ---------------------------------------------------------------------------------


def lldpdu(system: str, port: str, ttl: int = 120, mac: str = SPARK_MAC) -> bytes:
    return build_lldpdu(mac, port, ttl, system_name=system)


def heard(table: NeighborTable, interface: str, system: str, port: str, now: float,
          ttl: int = 120, mac: str = SPARK_MAC) -> None:
    table.learn(interface, mac, parse_lldpdu(lldpdu(system, port, ttl, mac)), now)


def view(table: NeighborTable, now: float) -> list[tuple[str, str, str, float]]:
    return [(e.id, e.interface, e.lldpdu.system_name, e.age(now)) for e in table.entries(now)]


def test_each_frame_refreshes_its_entry_and_the_age_counts_from_the_last() -> None:
    table = NeighborTable()
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1000.0)
    assert view(table, 1007.5) == [("*1", "qsfp56-dd-1-1", "spark01", 7.5)]
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1010.0)
    assert view(table, 1012.0) == [("*1", "qsfp56-dd-1-1", "spark01", 2.0)]  # same id


def test_an_entry_goes_when_its_ttl_runs_out_since_its_last_frame() -> None:
    table = NeighborTable()
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1000.0, ttl=40)
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1030.0, ttl=40)  # TTL from here
    assert [i for i, *_ in view(table, 1069.9)] == ["*1"]
    assert view(table, 1070.0) == []
    assert table.expire(1070.0) is True and table.snapshot()[0] == ()
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1080.0)
    assert [i for i, *_ in view(table, 1080.0)] == ["*2"]  # a new entry, a new id


def test_a_frame_with_ttl_0_removes_its_entry_at_once() -> None:
    table = NeighborTable()
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1000.0)
    heard(table, "qsfp56-dd-1-1", "spark01", "enP2p1s0f0np0", 1000.0)  # the other twin
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1001.0, ttl=0)  # lldpd stops
    assert view(table, 1001.0) == [("*2", "qsfp56-dd-1-1", "spark01", 1.0)]
    heard(table, "qsfp56-dd-2-1", "spark01", "enP2p1s0f0np0", 1002.0, ttl=0)  # another port
    assert [i for i, *_ in view(table, 1002.0)] == ["*2"]


def test_a_new_neighbour_on_a_port_leaves_the_old_one_to_age_out() -> None:
    table = NeighborTable()
    heard(table, "qsfp56-dd-1-1", "spark01", "enp1s0f0np0", 1000.0)
    heard(table, "qsfp56-dd-1-1", "spark02", "enp1s0f0np0", 1030.0, mac="02:AA:00:00:00:02")
    assert view(table, 1040.0) == [("*1", "qsfp56-dd-1-1", "spark01", 40.0),
                                   ("*2", "qsfp56-dd-1-1", "spark02", 10.0)]
    assert view(table, 1120.0) == [("*2", "qsfp56-dd-1-1", "spark02", 90.0)]


def test_frames_are_credited_to_the_name_they_arrive_on() -> None:
    """After the lane netdevs swap names, spark01's frames come in on the other name: a new
    entry there; the one under the old name stays and ages."""
    obs = Observations(clock := _Clock(1000.0))
    frame = build_frame(SPARK_MAC, lldpdu("spark01", "enp1s0f0np0"))
    assert obs.hear("qsfp56-dd-1-1", frame)
    clock.now = 1030.0
    assert obs.hear("qsfp56-dd-2-1", frame)
    got = [(e.id, e.interface, e.age(1035.0)) for e in obs.observed().neighbors]
    assert got == [("*1", "qsfp56-dd-1-1", 35.0), ("*2", "qsfp56-dd-2-1", 5.0)]


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (0.99, "0s"), (7.9, "7s"), (60, "1m"), (65, "1m5s"), (3723.5, "1h2m3s"),
    (86400, "1d"), (90061, "1d1h1m1s"), (694861, "1w1d1h1m1s"), (-3, "0s"),
])
def test_durations_as_routeros_prints_them(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_gmt_offset_and_zone_name() -> None:
    assert (format_gmt_offset(7200), format_gmt_offset(-19800), format_gmt_offset(0)) == (
        "+02:00", "-05:30", "+00:00")
    assert time_zone_name({"TZ": "Europe/Riga"}) == "Europe/Riga"
    assert time_zone_name({"TZ": "UTC"}) == "UTC"
    assert time_zone_name({"TZ": "EST5EDT"}) == "manual"


# --- link events and history -------------------------------------------------------------------

UP = IFF_UP | IFF_RUNNING | IFF_LOWER_UP


def test_rtm_newlink_parsing() -> None:
    data = (newlink_message(7, "qsfp56-dd-1-1", UP) + newlink_message(8, "qsfp56-dd-2-1", IFF_UP)
            + newlink_message(9, "gone", 0, kind=RTM_DELLINK))
    events, done = parse_datagram(data)
    assert events == [LinkEvent(7, "qsfp56-dd-1-1", True), LinkEvent(8, "qsfp56-dd-2-1", False),
                      LinkEvent(9, "gone", False, deleted=True)]
    assert not done
    assert parse_datagram(newlink_message(7, "x", UP) + done_message())[1] is True
    # lower up without running (operstate not yet up) is not a link yet; a torn message ends
    events, _ = parse_datagram(newlink_message(7, "x", IFF_UP | IFF_LOWER_UP)
                               + newlink_message(8, "y", UP)[:-3])
    assert events == [LinkEvent(7, "x", False)]


def test_history_per_name_across_a_swap_of_names() -> None:
    """The lab's re-plug: A and B down, A->tmp, B->A, tmp->B, both up again."""
    h = LinkHistory()
    assert h.observe(LinkEvent(1, "A", True), 100.0)  # the start-up dump: up "now"
    assert h.observe(LinkEvent(2, "B", True), 100.0)
    assert not h.observe(LinkEvent(3, "C", False), 100.0)  # never had a link
    for event in (LinkEvent(1, "A", False), LinkEvent(2, "B", False)):
        h.observe(event, 130.0)
    for event in (LinkEvent(1, "tmp", False), LinkEvent(2, "A", False), LinkEvent(1, "B", False)):
        assert not h.observe(event, 131.0)
    h.observe(LinkEvent(2, "A", True), 132.0)
    h.observe(LinkEvent(1, "B", True), 133.0)
    assert h.times() == {"A": LinkTimes(132.0, 130.0), "B": LinkTimes(133.0, 130.0)}
    assert not h.observe(LinkEvent(1, "B", True), 140.0)  # an MTU change, say: no transition


def test_history_on_delete_and_a_new_netdev_of_the_name() -> None:
    h = LinkHistory()
    h.observe(LinkEvent(1, "A", True), 100.0)
    assert h.observe(LinkEvent(1, "A", False, deleted=True), 110.0)
    assert h.observe(LinkEvent(5, "A", True), 120.0)
    assert h.times() == {"A": LinkTimes(120.0, 110.0)}
