"""One node's step of a migration: what re-cabling it took (`Rewire`), the address changes,
its estimated minutes and how to undo it."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric.intent.model import Intent, Link
from fabric.plan import data
from fabric.plan.model import AddressChange, CableAction


def addr_changes(src: Intent, dst: Intent, host: str) -> list[AddressChange]:
    before = {i.netdev: str(i.address) for i in src.interfaces(host)}
    after = {i.netdev: str(i.address) for i in dst.interfaces(host)}
    order = [i.netdev for i in dst.interfaces(host)] + [i.netdev for i in src.interfaces(host)]
    seen: list[str] = []
    for n in order:
        if n not in seen:
            seen.append(n)
    return [AddressChange(host, n, before.get(n), after.get(n)) for n in seen]


def cable_ends(actions: list[CableAction]) -> int:
    return sum(1 if a.action in ("unplug", "plug") else 2 for a in actions)


def undo_cables(actions: list[CableAction]) -> list[str]:
    out = []
    for a in reversed(actions):
        if a.action == "move":
            out.append(f"move {a.cable} back: {a.to_port} -> {a.from_port}")
        elif a.action == "unplug":
            out.append(f"plug {a.cable} back into {a.from_port}")
        elif a.action == "remove":
            out.append(f"re-plug {a.cable} into {a.from_port}")
        else:
            out.append(f"unplug {a.cable} from {a.to_port}")
    return out


@dataclass
class Rewire:
    """What re-cabling one node took: the cables it left, the nodes a port-mode change
    bounced, the ports re-moded, the hand movements and the switch commands (and undo)."""

    old: list[Link]
    bounced: set[str]
    ports: list[str]
    cables: list[CableAction] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    undo_commands: list[str] = field(default_factory=list)


def wave_minutes(rw: Rewire, readdress: bool) -> float:
    """Estimated minutes of a node's step (plan.yaml durations)."""
    return (data.duration("drain") + data.duration("cable_end") * cable_ends(rw.cables)
            + data.duration("port_mode") * len(rw.ports)
            + (data.duration("bounce") if rw.bounced else 0)
            + (data.duration("readdress") if readdress else 0) + data.duration("node_gate"))


def wave_rollback(node: str, rw: Rewire, readdress: bool) -> list[str]:
    """Undo a node's step: cables back, port modes back, its netplan back, re-gate."""
    rollback = [*undo_cables(rw.cables), *rw.undo_commands]
    if readdress:
        rollback.append(f"restore {node}'s netplan: `sudo tar xzf "
                        "/var/backups/fabric-netplan.tgz -C / && sudo netplan apply`")
    rollback.append(f"re-run the pre-check gate on {node}")
    return rollback
