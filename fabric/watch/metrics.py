"""A cycle's readings as Prometheus metric families, labelled from the intent.

Every link metric carries `side` (spark | switch), `cable`, `spark`, `twin`, `rail` and
`lane` (empty where they do not apply: a switch lane has no twin), and `direction` (rx | tx)
where the counter has one. Device counters are exposed as Prometheus counters with the
device's own value: nothing is reset, and a restart of watch reads them on. A counter a
device does not report is absent, never 0; a host that did not answer this cycle has no link
samples (its `fabric_watch_up` says why)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from fabric.devices.crs804.qos import rate_bps
from fabric.facts import ETHERNET, ETHTOOL, INTERFACE, IP, RDMA
from fabric.intent.model import Intent
from fabric.neighbors import endpoint
from fabric.parsers.records import LldpNeighbor
from fabric.watch import labels as lbl
from fabric.watch.readings import HostStatus, Row, SparkReading, SwitchReading

LINK_LABELS = ("side", "cable", "spark", "twin", "rail", "lane")
DIRECTED = (*LINK_LABELS, "direction")


@dataclass(frozen=True)
class CounterSpec:
    """One Prometheus counter and where each side reads it: (source, key, direction)."""

    name: str
    help: str
    spark: tuple[tuple[str, str, str], ...] = ()
    switch: tuple[tuple[str, str, str], ...] = ()

    @property
    def directed(self) -> bool:
        return any(d for _, _, d in (*self.spark, *self.switch))


SYSFS = "sysfs"
COUNTERS: tuple[CounterSpec, ...] = (
    CounterSpec("fabric_link_carrier_changes", "Carrier changes (up and down) of the link.",
                spark=((IP, "carrier_changes", ""),)),
    CounterSpec("fabric_link_downs", "Times the link went down.",
                spark=((SYSFS, "carrier_down", ""),), switch=((INTERFACE, "link-downs", ""),)),
    CounterSpec("fabric_link_errors", "Receive/transmit errors.",
                spark=((IP, "rx_errors", "rx"), (IP, "tx_errors", "tx")),
                switch=((INTERFACE, "rx-error", "rx"), (INTERFACE, "tx-error", "tx"))),
    CounterSpec("fabric_link_fcs_errors", "Frames received with a bad FCS/CRC.",
                spark=((IP, "rx_crc_errors", "rx"),),
                switch=((ETHERNET, "rx-fcs-error", "rx"),)),
    CounterSpec("fabric_link_drops", "Packets dropped by the interface.",
                spark=((IP, "rx_dropped", "rx"), (IP, "tx_dropped", "tx")),
                switch=((INTERFACE, "rx-drop", "rx"), (INTERFACE, "tx-drop", "tx"))),
    CounterSpec("fabric_link_discards", "Packets the port discarded (ethtool *_discards_phy).",
                spark=((ETHTOOL, "rx_discards_phy", "rx"), (ETHTOOL, "tx_discards_phy", "tx"))),
    CounterSpec("fabric_link_pause_frames", "Link-level pause frames.",
                spark=((ETHTOOL, "rx_pause_ctrl_phy", "rx"), (ETHTOOL, "tx_pause_ctrl_phy", "tx")),
                switch=((ETHERNET, "rx-pause", "rx"), (ETHERNET, "tx-pause", "tx"))),
    CounterSpec("fabric_link_pfc_frames", "PFC pause frames of the RoCE priority (3).",
                spark=((ETHTOOL, "rx_prio3_pause", "rx"), (ETHTOOL, "tx_prio3_pause", "tx"))),
    CounterSpec("fabric_rdma_cnp", "RoCE congestion notification packets (tx: sent, rx: "
                "handled).", spark=((RDMA, "np_cnp_sent", "tx"), (RDMA, "rp_cnp_handled", "rx"))),
    CounterSpec("fabric_rdma_out_of_buffer", "Packets the RDMA device dropped for lack of "
                "receive buffers.", spark=((RDMA, "out_of_buffer", "rx"),)),
    CounterSpec("fabric_link_bytes", "Bytes through the link.",
                spark=((IP, "rx_bytes", "rx"), (IP, "tx_bytes", "tx")),
                switch=((INTERFACE, "rx-byte", "rx"), (INTERFACE, "tx-byte", "tx"))),
)


def _num(value: object) -> float | None:
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        return None


def _truth(value: object) -> bool:
    return str(value).lower() in ("true", "yes", "1")


class Families:
    """The families of one cycle, by name, filled side by side."""

    def __init__(self, intent: Intent) -> None:
        self.mtu = intent.mtu
        self.gauges = {
            "fabric_link_up": GaugeMetricFamily(
                "fabric_link_up", "1 when the link has carrier (switch: running).",
                labels=LINK_LABELS),
            "fabric_link_speed_mbps": GaugeMetricFamily(
                "fabric_link_speed_mbps", "Link speed in Mb/s as the kernel reports it.",
                labels=LINK_LABELS),
            "fabric_link_mtu_bytes": GaugeMetricFamily(
                "fabric_link_mtu_bytes", "The interface's MTU.", labels=LINK_LABELS),
            "fabric_link_mtu_intent_bytes": GaugeMetricFamily(
                "fabric_link_mtu_intent_bytes", "The MTU the intent plans.", labels=LINK_LABELS),
            "fabric_lldp_neighbor_match": GaugeMetricFamily(
                "fabric_lldp_neighbor_match", "1 when the port's LLDP neighbours are the "
                "cable's planned far end and nothing else (a Spark twin: lldpd; a switch "
                "lane: /ip/neighbor).", labels=LINK_LABELS),
        }
        self.counters = {c.name: CounterMetricFamily(
            c.name, c.help, labels=DIRECTED if c.directed else LINK_LABELS) for c in COUNTERS}

    def gauge(self, name: str, labels: Mapping[str, str], value: float) -> None:
        self.gauges[name].add_metric([labels[k] for k in LINK_LABELS], value)

    def counter(self, spec: CounterSpec, labels: Mapping[str, str], direction: str,
                value: float) -> None:
        values = [labels[k] for k in LINK_LABELS] + ([direction] if spec.directed else [])
        self.counters[spec.name].add_metric(values, value)

    def all(self) -> list[Metric]:
        return [*self.gauges.values(), *self.counters.values()]


def _spark_labels(t: lbl.TwinLabels) -> dict[str, str]:
    return {"side": "spark", **t.as_labels()}


def _lane_labels(lane: lbl.LaneLabels) -> dict[str, str]:
    return {"side": "switch", "twin": "", "rail": "", **lane.as_labels()}


def add_spark(fam: Families, intent: Intent, reading: SparkReading) -> None:
    """A Spark's twins: state from sysfs, counters from ip, ethtool and RDMA."""
    for t in lbl.twins(intent, reading.host):
        labels = _spark_labels(t)
        state = reading.links.get(t.twin)
        port = reading.counters.ports.get(t.twin)
        sources: dict[str, dict[str, int]] = dict(port.values) if port else {}
        if state is not None:
            fam.gauge("fabric_link_up", labels, float(state.carrier))
            if state.speed_mbps is not None:
                fam.gauge("fabric_link_speed_mbps", labels, state.speed_mbps)
            if state.mtu is not None:
                fam.gauge("fabric_link_mtu_bytes", labels, state.mtu)
            if state.carrier_down is not None:
                sources[SYSFS] = {"carrier_down": state.carrier_down}
        fam.gauge("fabric_link_mtu_intent_bytes", labels, fam.mtu)
        if reading.neighbors is not None:
            fam.gauge("fabric_lldp_neighbor_match", labels,
                      float(twin_lldp_matches(intent, t, reading.neighbors)))
        _add_counters(fam, labels, sources, "spark")


def twin_lldp_matches(intent: Intent, twin: lbl.TwinLabels,
                      neighbors: Iterable[LldpNeighbor]) -> bool:
    """Whether lldpd's neighbours on the twin are exactly the cable's planned far end (both
    far twins of a Spark port name that port). A neighbour learned before a re-plug stays
    until its TTL: a moved cable reads 0 as soon as the new far end is heard."""
    link = next(link for link in intent.links if link.id == twin.link)
    far = str(link.peer_of(twin.spark))
    heard = {endpoint(intent, n.chassis_name or "", n.port_id or "")
             for n in neighbors if n.local_interface == twin.twin}
    return heard == {far}


def _add_counters(fam: Families, labels: Mapping[str, str],
                  sources: Mapping[str, Mapping[str, float]], side: str) -> None:
    for spec in COUNTERS:
        for source, key, direction in (spec.spark if side == "spark" else spec.switch):
            value = sources.get(source, {}).get(key)
            if value is not None:
                fam.counter(spec, labels, direction, value)


def _numbers(row: Row | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in (row or {}).items():
        num = _num(value)
        if num is not None:
            out[key] = num
    return out


def lldp_matches(intent: Intent, lane: lbl.LaneLabels, neighbors: Iterable[Row]) -> bool:
    """Whether some `/ip/neighbor` row heard on the lane names the cable's Spark end."""
    for row in neighbors:
        if str(row.get("interface", "")).split(",")[0] != lane.lane:
            continue
        far = endpoint(intent, str(row.get("identity", "")), str(row.get("interface-name", "")))
        if far == lane.spark_port:
            return True
    return False


def add_switch(fam: Families, intent: Intent, reading: SwitchReading) -> None:
    """The switch's cabled lanes: running, MTU, counters and LLDP."""
    for lane in lbl.lanes(intent):
        labels = _lane_labels(lane)
        iface = reading.interface.get(lane.lane)
        if iface is None:
            continue
        fam.gauge("fabric_link_up", labels, float(_truth(iface.get("running"))))
        bps = rate_bps(str(reading.monitor.get(lane.lane, {}).get("rate", "")))
        if bps:
            fam.gauge("fabric_link_speed_mbps", labels, bps / 10**6)
        mtu = _num(iface.get("actual-mtu", iface.get("mtu", "")))
        if mtu is not None:
            fam.gauge("fabric_link_mtu_bytes", labels, mtu)
        if intent.switch is not None:
            fam.gauge("fabric_link_mtu_intent_bytes", labels, intent.switch.mtu)
        fam.gauge("fabric_lldp_neighbor_match", labels,
                  float(lldp_matches(intent, lane, reading.neighbors)))
        sources = {INTERFACE: _numbers(iface), ETHERNET: _numbers(reading.ethernet.get(lane.lane))}
        _add_counters(fam, labels, sources, "switch")


def health(statuses: Mapping[str, HostStatus], cycle_s: float, interval: float,
           finished: float) -> list[Metric]:
    """The watcher's own health: per host up, scrape seconds, failures and connects."""
    up = GaugeMetricFamily("fabric_watch_up", "1 when the host answered the last cycle.",
                           labels=("host",))
    secs = GaugeMetricFamily("fabric_watch_scrape_seconds", "Seconds the host's last read "
                             "took (the timeout when it did not answer).", labels=("host",))
    fails = CounterMetricFamily("fabric_watch_scrape_failures", "Failed reads of the host "
                                "by kind: timeout (every cycle it stays stuck), connect, read; "
                                "cycles skipped while a session waits out its backoff are not "
                                "counted.", labels=("host", "kind"))
    connects = CounterMetricFamily("fabric_watch_connects", "Sessions opened to the host.",
                                   labels=("host",))
    for host, s in sorted(statuses.items()):
        up.add_metric([host], float(s.up))
        secs.add_metric([host], round(s.seconds, 6))
        for kind in ("timeout", "connect", "read"):
            fails.add_metric([host, kind], s.failures.get(kind, 0))
        connects.add_metric([host], s.connects)
    cycle = GaugeMetricFamily("fabric_watch_cycle_seconds", "Seconds the last cycle took.",
                              value=round(cycle_s, 6))
    every = GaugeMetricFamily("fabric_watch_interval_seconds", "Seconds between cycles.",
                              value=interval)
    last = GaugeMetricFamily("fabric_watch_last_cycle_timestamp_seconds",
                             "Unix time the last cycle finished.", value=finished)
    return [up, secs, fails, connects, cycle, every, last]


def cycle_metrics(intent: Intent, readings: Mapping[str, SparkReading | SwitchReading],
                  statuses: Mapping[str, HostStatus], cycle_s: float, interval: float,
                  finished: float) -> list[Metric]:
    """Every family of one cycle."""
    fam = Families(intent)
    info = GaugeMetricFamily("fabric_cable_info", "A planned cable: its kind as the topology "
                             "names it.", labels=("cable", "kind", "speed_gbps"))
    for link in intent.links:
        info.add_metric([lbl.cable_name(link), link.cable, str(link.speed_gbps)], 1.0)
    for _, reading in sorted(readings.items()):
        if isinstance(reading, SparkReading):
            add_spark(fam, intent, reading)
        else:
            add_switch(fam, intent, reading)
    return [*fam.all(), info, *health(statuses, cycle_s, interval, finished)]
