"""What the wire implies, from the intent alone: header bytes on a ping, and which cable (and
which end of it) traffic between two Sparks crosses. Shared by probes and validators."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.intent.model import Link

#: IPv4 (20) + ICMP (8) header bytes: the largest DF ping payload is MTU - 28.
IP_ICMP_HEADERS = 28


@dataclass(frozen=True)
class Crossing:
    """One cable in one direction: traffic from host `src` to host `dst` over `link`.
    `where` names it at the hardware: `crs804:qsfp56-dd-1-1 egress` (toward the Spark on a
    star), `spark01:p0 tx, spark02:p1 rx` (a direct cable)."""

    link: str
    src: str
    dst: str
    where: str

    @property
    def label(self) -> str:
        """`crs804→spark01 (crs804:qsfp56-dd-1-1 egress)`."""
        return f"{self.src}→{self.dst} ({self.where})"

    def to_dict(self) -> dict[str, str]:
        return {"link": self.link, "src": self.src, "dst": self.dst, "where": self.where}


def crossing(link: Link, src: str, dst: str, switch: str | None = None) -> Crossing | None:
    """The crossing of `link` by traffic sent from Spark `src` to Spark `dst` (None: the
    traffic does not cross `link`). Direct cable: its two ends. Through `switch`: the lane
    of `src`'s cable is its ingress, the lane of `dst`'s cable its egress."""
    ends = {link.a.host, link.b.host}
    if ends == {src, dst}:
        s, d = link.end_of(src), link.end_of(dst)
        return Crossing(link.id, src, dst, f"{src}:{s.port} tx, {dst}:{d.port} rx")
    if switch is None or switch not in ends:
        return None
    lane = f"{switch}:{link.end_of(switch).port}"
    spark = link.peer_of(switch).host
    if spark == src:
        return Crossing(link.id, src, switch, f"{lane} ingress")
    if spark == dst:
        return Crossing(link.id, switch, dst, f"{lane} egress")
    return None
