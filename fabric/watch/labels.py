"""The intent's names for what watch reads: every Spark twin and switch lane a cable uses."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.intent.model import Intent, Link


@dataclass(frozen=True)
class TwinLabels:
    """A cabled Spark netdev: `twin` is the netdev, `rail` its twin index (0 = A, 1 = B),
    `lane` the switch lane its cable ends on ("" on a Spark-to-Spark cable)."""

    spark: str
    twin: str
    rail: int
    rdma: str
    cable: str
    lane: str
    link: str

    def as_labels(self) -> dict[str, str]:
        return {"cable": self.cable, "spark": self.spark, "twin": self.twin,
                "rail": str(self.rail), "lane": self.lane}


@dataclass(frozen=True)
class LaneLabels:
    """A cabled switch lane and the Spark end of its cable (`spark_port`: host:port)."""

    switch: str
    lane: str
    cable: str
    spark: str
    spark_port: str
    link: str

    def as_labels(self) -> dict[str, str]:
        return {"cable": self.cable, "spark": self.spark, "lane": self.lane}


def cable_name(link: Link) -> str:
    """A cable's label: its link id (`spark02:p0--crs804:qsfp56-dd-2-1`, the report's
    contract), unique and naming both ends; the topology's `cable:` is its kind (`dac-200g`),
    shared by many cables (`fabric_cable_info` carries it)."""
    return link.id


def twins(intent: Intent, host: str | None = None) -> list[TwinLabels]:
    """The cabled twins (of one Spark, or all) in the intent's stable order."""
    links = {link.id: link for link in intent.links}
    out = []
    for i in intent.interfaces(host):
        link = links[i.link_id]
        out.append(TwinLabels(i.host, i.netdev, i.twin, i.rdma, cable_name(link),
                              link.switch_lane or "", link.id))
    return out


def lanes(intent: Intent) -> list[LaneLabels]:
    """The switch's cabled lanes with the Spark end of each cable."""
    if intent.switch is None:
        return []
    links = {link.id: link for link in intent.links}
    out = []
    for lane in intent.switch.lanes:
        if lane.link_id is None or lane.link_id not in links:
            continue
        link = links[lane.link_id]
        far = link.peer_of(intent.switch.host)
        out.append(LaneLabels(intent.switch.host, lane.name, cable_name(link), far.host,
                              str(far), link.id))
    return out


def sparks(intent: Intent) -> list[str]:
    """The Sparks with at least one cabled twin."""
    return sorted({t.spark for t in twins(intent)})
