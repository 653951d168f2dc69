"""A fault's TARGET as the lab knows it: link ids, `host:port`, bare switch lanes,
`host:netdev`, two cable ends of a swap and the `@direction,PCT%` of a drop.

Nothing here touches the kernel: a target that names nothing in the lab is an InputError.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.errors import InputError
from fabric.intent.model import Endpoint, Intent, Link
from fabric.lab.lifecycle import cabling
from fabric.lab.lifecycle.registry import LabInfo

#: Share of frames a `drop` fault loses per direction unless TARGET says otherwise.
DROP_PERCENT = 5.0
DIRECTIONS = ("rx", "tx", "both")


@dataclass(frozen=True)
class Ctx:
    """The lab a fault acts on: its record and its intent."""

    info: LabInfo
    intent: Intent

    def netns(self, host: str) -> str:
        if host not in self.info.namespaces:
            raise InputError(f"{host} is not a host of lab {self.info.name} "
                             f"({', '.join(sorted(self.info.namespaces))})")
        return self.info.namespaces[host]

    def holder(self, host: str) -> int:
        return self.info.hosts[host].pids["holder"]


def resolve_link(ctx: Ctx, target: str) -> tuple[Link, str]:
    """A link id, `host:port` or a bare switch lane -> (link, the host whose end was named)."""
    if "--" in target:
        try:
            link = ctx.intent.link(target)
        except KeyError:
            raise InputError(f"no link {target!r} in lab {ctx.info.name}; links: "
                             f"{', '.join(lk.id for lk in ctx.intent.links)}") from None
        return link, link.a.host
    host, _, port = target.rpartition(":")
    if not host and ctx.info.switch:
        host = ctx.info.switch
    ctx.netns(host)
    found = cabling.link_by_end(ctx.intent, host, port)
    if found is None:
        raise InputError(f"{host}:{port} has no cable in lab {ctx.info.name}")
    return found, host


def lab_spark(ctx: Ctx, host: str, kind: str) -> None:
    """InputError unless `host` is a Spark of this lab (the inventory names more Sparks than
    a small lab builds)."""
    spec = ctx.intent.hosts.get(host)
    if spec is None or spec.role != "spark" or host not in ctx.info.namespaces:
        raise InputError(f"{kind}: {host} is not a Spark of lab {ctx.info.name}")


def switch_lane(ctx: Ctx, target: str) -> str:
    """The switch lane of the cable `target` names."""
    if ctx.info.switch is None:
        raise InputError(f"lab {ctx.info.name} has no switch ({ctx.info.topology})")
    link, _ = resolve_link(ctx, target)
    return link.end_of(ctx.info.switch).port


def cable_end(ctx: Ctx, host: str, port: str) -> cabling.CableEnd:
    return cabling.cable_end(ctx.intent, Endpoint(host, port))


def host_netdev(ctx: Ctx, target: str) -> tuple[str, str]:
    """`HOST:NETDEV` -> (host, netdev); the host must be one of the lab."""
    host, sep, netdev = target.partition(":")
    if not sep or not netdev:
        raise InputError(f"expected HOST:NETDEV (e.g. spark01:enp1s0f0np0), got {target!r}")
    ctx.netns(host)
    return host, netdev


def swap_links(ctx: Ctx, target: str) -> tuple[tuple[Link, str], tuple[Link, str]]:
    """`A,B` (two cable ends) -> ((link, named host) of A, (link, named host) of B)."""
    parts = [p.strip() for p in target.split(",")]
    if len(parts) != 2:
        raise InputError(f"swap takes two cable ends A,B (e.g. crs804:qsfp56-dd-1-1,"
                         f"crs804:qsfp56-dd-2-1), got {target!r}")
    (la, ha), (lb, hb) = resolve_link(ctx, parts[0]), resolve_link(ctx, parts[1])
    if la.id == lb.id:
        raise InputError(f"{parts[0]} and {parts[1]} are the two ends of one cable")
    return (la, ha), (lb, hb)


def bounced_end(ctx: Ctx, link: Link, named: str) -> cabling.CableEnd:
    """The end a flap bounces: the Spark end of a switch cable (the lane stays enabled), else
    the named end."""
    sw = ctx.info.switch
    ep = link.peer_of(sw) if sw is not None and sw in (link.a.host, link.b.host) else \
        link.end_of(named)
    return cable_end(ctx, ep.host, ep.port)


def drop_spec(target: str) -> tuple[str, str, float]:
    """`TARGET[@rx|@tx|@both][,PCT%]` -> (target, direction, percent)."""
    spec, at, options = target.partition("@")
    direction, percent = "both", DROP_PERCENT
    for word in (w.strip() for w in options.split(",") if w.strip()) if at else ():
        if word in DIRECTIONS:
            direction = word
            continue
        try:
            percent = float(word.removesuffix("%"))
        except ValueError:
            raise InputError(f"drop takes TARGET[@rx|@tx|@both][,PCT%] (e.g. "
                             f"spark02:p0@tx,5%), got {target!r}") from None
        if not 0 < percent <= 100:
            raise InputError(f"drop share must be above 0 and at most 100 %, got {word!r}")
    return spec, direction, percent


def drop_senders(link: Link, named: str, direction: str) -> list[Endpoint]:
    """The ends of `link` that send what a drop loses: `tx`/`rx` as seen from `named`."""
    here, there = link.end_of(named), link.peer_of(named)
    senders: list[Endpoint] = {"tx": [here], "rx": [there], "both": [here, there]}[direction]
    return senders
