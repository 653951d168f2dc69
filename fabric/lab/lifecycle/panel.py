"""The patch panel: Spark-to-Spark cables that can be re-plugged without re-creating a twin.

A cable between two Sparks cannot be one veth pair: a veth cannot be re-paired, and a Spark's
twins (macvlans) cannot change their lower, so a re-plug would mean new netdevs, which lldpd
takes for new ports (its neighbours wiped, a kinder start than a field re-plug gives). So each
Spark end is a veth from its hidden cable end (`cx7-pN`) to a panel end (`spark01-p0`) in the
lab's panel namespace (`NAME-dac-panel`), and each cable is a two-port bridge there (`dacN`,
in intent order) that forwards LLDP (group_fwd_mask bit 14) and nothing of its own (no STP,
no IPv6, no address).

A bridge passes no carrier: a field cable end that goes dark takes the far end's light with
it. The faults that darken a Spark end of such a cable therefore also take the far Spark's
panel end down (`far_end`), so both Sparks lose carrier as with a real DAC.
"""

from __future__ import annotations

from fabric.intent.model import Endpoint, Intent, Link
from fabric.lab import names

#: Forward LLDP (01:80:c2:00:00:0e) across a cable; a bridge drops link-local groups.
LLDP_FWD_MASK = "0x4000"
#: The panel namespace says nothing of its own.
PANEL_SYSCTLS = {"net.ipv6.conf.all.disable_ipv6": "1",
                 "net.ipv6.conf.default.disable_ipv6": "1"}


def is_spark_cable(intent: Intent, link: Link) -> bool:
    """Both ends on Sparks (a DAC of a ring): the cable goes through the panel."""
    return all(intent.hosts[ep.host].role == "spark" for ep in link.ends())


def spark_cables(intent: Intent) -> list[Link]:
    return [link for link in intent.links if is_spark_cable(intent, link)]


def slot_of(intent: Intent, ep: Endpoint) -> str:
    """The bridge that holds `ep`'s cable as the intent lays it."""
    for i, link in enumerate(spark_cables(intent), start=1):
        if ep in link.ends():
            return names.panel_slot(i)
    raise KeyError(f"{ep.host}:{ep.port} has no Spark-to-Spark cable")


def end_of(ep: Endpoint) -> str:
    return names.panel_end(ep.host, ep.port)


def far_end(intent: Intent, link: Link, host: str) -> str:
    """The panel end of the Spark across `link` from `host` (what a dark end darkens)."""
    return end_of(link.peer_of(host))


def root_lines(lab: str, intent: Intent) -> list[str]:
    """Root-namespace `ip -batch` lines: every Spark end of a panel cable, as a veth from
    the hidden cable end in the Spark to its panel end."""
    out = []
    for link in spark_cables(intent):
        for ep in link.ends():
            out.append(f"link add name {names.lower(ep.port)} netns {names.netns(lab, ep.host)} "
                       f"mtu {names.LOWER_MTU} type veth peer name {end_of(ep)} "
                       f"netns {names.panel_netns(lab)} mtu {names.LOWER_MTU}")
    return out


def panel_lines(intent: Intent) -> list[str]:
    """Inside the panel: one bridge per cable with both its ends, all up."""
    lines = []
    for i, link in enumerate(spark_cables(intent), start=1):
        slot = names.panel_slot(i)
        lines.append(f"link add name {slot} mtu {names.LOWER_MTU} type bridge "
                     f"group_fwd_mask {LLDP_FWD_MASK}")
        lines += [f"link set {end_of(ep)} master {slot}" for ep in link.ends()]
        lines += [f"link set {end_of(ep)} up" for ep in link.ends()]
        lines.append(f"link set {slot} up")
    return lines


def replug_lines(intent: Intent, cables: list[tuple[Endpoint, Endpoint]]) -> list[str]:
    """Inside the panel: re-plug `cables` (pairs of Spark ends), as a person does: every end
    involved unplugged, each cable's ends into the slot of its first end, all plugged in."""
    ends = [end_of(ep) for pair in cables for ep in pair]
    lines = [f"link set {e} down" for e in ends]
    for a, b in cables:
        slot = slot_of(intent, a)
        lines += [f"link set {end_of(a)} master {slot}", f"link set {end_of(b)} master {slot}"]
    return lines + [f"link set {e} up" for e in ends]
