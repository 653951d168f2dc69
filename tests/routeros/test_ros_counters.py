"""Interface counters: ``/interface`` rows and ``/interface/ethernet print stats`` print the
kernel's counters (here a fake kernel), only those veth has a source for, and the validators'
collector reads them the way it reads a real CRS804."""

from __future__ import annotations

from typing import Any

from fabric.lab.routeros.backend import KernelCounters
from fabric.lab.routeros.cli import Cli
from fabric.lab.routeros.counters import ETHERNET_STATS, INTERFACE_STATS
from fabric.probes.counters import ETHERNET, INTERFACE, switch_snapshot

from .helpers import Lab

LANE = "qsfp56-dd-1-1"
UNCABLED = "qsfp56-dd-1-2"
INTERFACE_COUNTERS = {"link-downs", *(a for a, _ in INTERFACE_STATS), "tx-queue-drop"}
ETHERNET_COUNTERS = {a for a, _ in ETHERNET_STATS}
#: What a real CRS804 prints and veth has no kernel counter for: never printed, not even 0.
NO_KERNEL_SOURCE = ("rx-pause", "tx-pause", "rs-fec-uncorrected", "fc-fec-block-uncorrected",
                    "rx-code-error", "tx-fcs-error", "rx-64", "rx-too-long", "fp-rx-byte")


def _by_name(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {r["name"]: dict(r) for r in rows}


def _interface(api: Any) -> dict[str, dict[str, str]]:
    return _by_name(api.get_resource("/interface").get())


def _stats(api: Any, menu: str) -> dict[str, dict[str, str]]:
    """`print stats` exactly as fabric/probes/counters.py asks for it."""
    return _by_name(api.get_resource(menu).call("print", {"stats": ""}))


def test_interface_rows_carry_the_kernels_counters(api: Any, lab: Lab) -> None:
    lab.backend.count(LANE, rx_bytes=1234, tx_bytes=5678, rx_packets=12, tx_packets=34,
                      rx_dropped=1, tx_dropped=2, rx_errors=3, tx_errors=4, queue_drops=5)
    row = _interface(api)[LANE]
    assert {k: row[k] for k in INTERFACE_COUNTERS} == {
        "link-downs": "0", "rx-byte": "1234", "tx-byte": "5678", "rx-packet": "12",
        "tx-packet": "34", "rx-drop": "1", "tx-drop": "2", "rx-error": "3", "tx-error": "4",
        "tx-queue-drop": "5"}
    assert _stats(api, "/interface")[LANE] == row  # `print stats` on /interface: the same row
    lab.backend.count(LANE, rx_packets=13)
    assert _interface(api)[LANE]["rx-packet"] == "13"  # read again on every request


def test_link_downs_count_every_carrier_loss_underneath(api: Any, lab: Lab) -> None:
    for _ in range(2):
        lab.backend.poke(LANE, carrier=False)  # the far end went away
        lab.backend.poke(LANE, carrier=True)
    assert _interface(api)[LANE]["link-downs"] == "2"
    api.get_resource("/interface/ethernet").call("disable", {"numbers": LANE})
    assert _interface(api)[LANE]["link-downs"] == "3"  # disabling takes the link down too


def test_ethernet_print_stats_prints_only_counters_with_a_kernel_source(api: Any,
                                                                        lab: Lab) -> None:
    lab.backend.count(LANE, rx_crc_errors=7, rx_frame_errors=8, rx_length_errors=9,
                      rx_over_errors=10, rx_dropped=11, tx_dropped=12, rx_bytes=100,
                      tx_bytes=200, rx_packets=1, tx_packets=2)
    row = _stats(api, "/interface/ethernet")[LANE]
    assert row == {"id": "*1", "name": LANE, "rx-bytes": "100", "tx-bytes": "200",
                   "rx-packet": "1", "tx-packet": "2", "rx-fcs-error": "7",
                   "rx-align-error": "8", "rx-length-error": "9", "rx-overflow": "10",
                   "rx-drop": "11", "tx-drop": "12"}
    for rows in (_stats(api, "/interface/ethernet"), _interface(api)):
        assert not [(n, k) for n, r in rows.items() for k in NO_KERNEL_SOURCE if k in r]
    plain = _by_name(api.get_resource("/interface/ethernet").get())[LANE]
    assert not ETHERNET_COUNTERS & set(plain)  # plain print: the settings, no counters
    assert plain["speed"] and "rx-flow-control" in plain


def test_an_uncabled_lane_counts_nothing_and_a_missing_netdev_prints_no_counters(
        api: Any, lab: Lab) -> None:
    rows = _interface(api)
    assert {k: rows[UNCABLED][k] for k in INTERFACE_COUNTERS} == dict.fromkeys(
        INTERFACE_COUNTERS, "0")
    assert {k: _stats(api, "/interface/ethernet")[UNCABLED][k] for k in ETHERNET_COUNTERS} \
        == dict.fromkeys(ETHERNET_COUNTERS, "0")
    lab.backend.del_link("qsfp56-dd-1-5")  # cabled, but its netdev is gone: nothing to read
    assert not INTERFACE_COUNTERS & set(_interface(api)["qsfp56-dd-1-5"])
    assert not ETHERNET_COUNTERS & set(_stats(api, "/interface/ethernet")["qsfp56-dd-1-5"])


def test_a_counter_the_kernel_does_not_report_is_left_out(api: Any, lab: Lab,
                                                          monkeypatch: Any) -> None:
    real = lab.backend.counters

    def partial() -> dict[str, KernelCounters]:
        out = real()
        out[LANE] = KernelCounters(LANE, {"rx_bytes": 5})  # no sysfs, no qdisc, one stat
        return out

    monkeypatch.setattr(lab.backend, "counters", partial)
    row = _interface(api)[LANE]
    assert row["rx-byte"] == "5" and not (INTERFACE_COUNTERS - {"rx-byte"}) & set(row)


def test_ether1_and_bridges_read_their_own_netdevs(api: Any, lab: Lab) -> None:
    api.get_resource("/interface/bridge").add(name="bridge1")
    lab.backend.count("ether1", rx_packets=42)
    lab.backend.count("bridge1", tx_packets=7)
    rows = _interface(api)
    assert rows["ether1"]["rx-packet"] == "42" and rows["bridge1"]["tx-packet"] == "7"
    assert _stats(api, "/interface/ethernet")["ether1"]["rx-packet"] == "42"


def test_the_validators_collector_reads_every_counter(api: Any, lab: Lab) -> None:
    lab.backend.poke(LANE, carrier=False)
    lab.backend.poke(LANE, carrier=True)
    lab.backend.count(LANE, rx_packets=10, tx_packets=20, tx_dropped=1, queue_drops=2,
                      rx_crc_errors=3)
    menus = {INTERFACE: api.get_resource("/interface").call("print", {"stats": ""}),
             ETHERNET: api.get_resource("/interface/ethernet").call("print", {"stats": ""})}
    snap = switch_snapshot("crs804", "now", [LANE], menus)
    port = snap.ports[LANE]
    assert not port.unavailable
    assert port.values[INTERFACE] == {"link-downs": 1, "rx-byte": 0, "tx-byte": 0,
                                      "rx-packet": 10, "tx-packet": 20, "rx-drop": 0,
                                      "tx-drop": 1, "rx-error": 0, "tx-error": 0,
                                      "tx-queue-drop": 2}
    assert port.values[ETHERNET]["rx-fcs-error"] == 3
    assert set(port.values[ETHERNET]) == ETHERNET_COUNTERS


def test_console_print_stats(lab: Lab) -> None:
    lab.backend.count(LANE, rx_bytes=999, queue_drops=3)
    cli = Cli(lab.device)
    table = cli.execute("/interface print stats where name=qsfp56-dd-1-1")
    assert table is not None
    head, row = table.splitlines()[-2:]
    assert head.split()[1:] == ["NAME", "RX-BYTE", "TX-BYTE", "RX-PACKET", "TX-PACKET",
                                "RX-DROP", "TX-DROP", "TX-QUEUE-DROP", "RX-ERROR", "TX-ERROR"]
    assert row.split()[2:] == [LANE, "999", "0", "0", "0", "0", "0", "3", "0", "0"]
    block = cli.execute("/interface ethernet print stats where name=qsfp56-dd-1-1")
    assert block is not None
    lines = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in block.splitlines())}
    assert lines == {"name": LANE, "rx-bytes": "999", "tx-bytes": "0", "rx-packet": "0",
                     "tx-packet": "0", "rx-fcs-error": "0", "rx-align-error": "0",
                     "rx-length-error": "0", "rx-overflow": "0", "rx-drop": "0", "tx-drop": "0"}
