"""Faults of one cable or lane: `mtu`, `link-down`, `degrade`, `autoneg` and `flap`.

`flap TARGET` (a lane, `host:port` or link id) bounces the cable for as long as the fault
lasts: a flapper process in the namespace of the cable's Spark end takes that end (the hidden
veth `cx7-pN`) down for FLAP_DOWN_S every FLAP_PERIOD_S, so both ends lose carrier: the twins
count carrier_changes, the lane counts link-downs and reads running=no while it stays
enabled, as with a failing DAC (between Sparks the far Spark's panel end bounces with it, see
`lifecycle.panel`). The flapper lives in a lab namespace, so `fabric lab down`
kills it with the lab; `heal` stops it and leaves the cable up.
"""

from __future__ import annotations

from typing import Any

from fabric.intent.model import Link
from fabric.lab import names, ns
from fabric.lab.faults.flapper import FLAP_DOWN_S, FLAP_PERIOD_S, flapper_argv, is_flapper
from fabric.lab.faults.kernel import is_up, link_info, link_set, root_tbf, set_tbf
from fabric.lab.faults.records import (
    AutonegUndo,
    DegradeUndo,
    Fault,
    FlapUndo,
    LinkDownUndo,
    MtuUndo,
    ShapedEnd,
    SwapRepairUndo,
    Tbf,
)
from fabric.lab.faults.state import active_faults
from fabric.lab.faults.targets import Ctx, bounced_end, cable_end, resolve_link, switch_lane
from fabric.lab.lifecycle import panel

#: A degraded cable's rate both ways: half of what the lab's bandwidth tests offer it (500M a
#: twin, two twins: profile `veth`), so the cable's tests measure half of their peers'.
DEGRADED_MBIT = 500
#: The longest a lane may train before a fault (or its heal) is given up on.
TRAINING_CEILING_S = 60.0


def mtu(ctx: Ctx, target: str) -> Fault:
    lane = switch_lane(ctx, target)
    assert ctx.info.switch is not None
    netns = ctx.netns(ctx.info.switch)
    before = int(link_info(netns, lane)["mtu"])
    if before <= 1500:
        raise ns.LabError(f"{lane} already has MTU {before}: configure the switch first "
                          f"(fabric push --lab {ctx.info.name} --apply)")
    link_set(netns, lane, "mtu", "1500")
    return Fault("mtu", target, f"{ctx.info.switch} {lane} kernel MTU {before} -> 1500",
                 MtuUndo(host=ctx.info.switch, dev=lane, mtu=before))


def undo_mtu(ctx: Ctx, u: MtuUndo) -> None:
    link_set(ctx.netns(u.host), u.dev, "mtu", str(u.mtu))


def link_down(ctx: Ctx, target: str) -> Fault:
    link, host = resolve_link(ctx, target)
    end = cable_end(ctx, host, link.end_of(host).port)
    far = panel_far_end(ctx, link, host)
    link_set(ctx.netns(host), end.netdev, "down")
    if far:
        link_set(names.panel_netns(ctx.info.name), far, "down")
    return Fault("link-down", target, f"cable {link.id} down at {host} ({end.netdev})",
                 LinkDownUndo(host=host, dev=end.netdev, far=far))


def undo_link_down(ctx: Ctx, u: LinkDownUndo) -> None:
    link_set(ctx.netns(u.host), u.dev, "up")
    if u.far:
        link_set(names.panel_netns(ctx.info.name), u.far, "up")


def panel_far_end(ctx: Ctx, link: Link, host: str) -> str:
    """The far Spark's panel end of a Spark-to-Spark cable (a dark end darkens it, see
    `lifecycle.panel`), "" for a cable to the switch; LabError while a swap re-plugs it."""
    if not panel.is_spark_cable(ctx.intent, link):
        return ""
    ends = {(ep.host, ep.port) for ep in link.ends()}
    for f in active_faults(ctx.info.name):
        if isinstance(f.undo, SwapRepairUndo) and any(
                {(c[0], c[1]), (c[2], c[3])} & ends for c in f.undo.cables):
            raise ns.LabError(f"cable {link.id} is re-plugged by a swap; `fabric lab heal` "
                              "first")
    return panel.far_end(ctx.intent, link, host)


def degrade(ctx: Ctx, target: str) -> Fault:
    link, _ = resolve_link(ctx, target)
    ends = [cable_end(ctx, ep.host, ep.port) for ep in link.ends()]
    before = tuple(ShapedEnd(e.host, e.netdev, root_tbf(ctx.netns(e.host), e.netdev))
                   for e in ends)
    rate = Tbf(rate=DEGRADED_MBIT * 1_000_000 // 8, burst=1 << 20)
    for e in ends:
        set_tbf(ctx.netns(e.host), e.netdev, rate)
    return Fault("degrade", target, f"cable {link.id} shaped to {DEGRADED_MBIT} Mbit/s both ways",
                 DegradeUndo(before=before))


def undo_degrade(ctx: Ctx, u: DegradeUndo) -> None:
    # in HOST:DEV order, as when the record was a JSON object with sorted keys
    for end in sorted(u.before, key=lambda e: f"{e.host}:{e.dev}"):
        set_tbf(ctx.netns(end.host), end.dev, end.tbf)


def autoneg(ctx: Ctx, target: str) -> Fault:
    lane = switch_lane(ctx, target)
    api = _api(ctx)
    try:
        res = api.get_api().get_resource("/interface/ethernet")
        rows = res.get(name=lane)
        if not rows:
            raise ns.LabError(f"the switch API does not list {lane}")
        row = rows[0]
        if str(row.get("auto-negotiation")) in ("true", "yes"):
            raise ns.LabError(f"{lane} already auto-negotiates (a fresh switch); configure it "
                              "first (fabric push --lab ... --apply)")
        res.set(id=row["id"], **{"auto-negotiation": "yes"})
        _trained(res, lane)
    finally:
        api.disconnect()
    return Fault("autoneg", target, f"{lane} auto-negotiation=yes (was speed={row.get('speed')})",
                 AutonegUndo(lane=lane, speed=str(row.get("speed", ""))))


def undo_autoneg(ctx: Ctx, u: AutonegUndo) -> None:
    api = _api(ctx)
    try:
        res = api.get_api().get_resource("/interface/ethernet")
        row = res.get(name=u.lane)[0]
        values = {"auto-negotiation": "no"}
        if u.speed:
            values["speed"] = u.speed
        res.set(id=row["id"], **values)
        _trained(res, u.lane)
    finally:
        api.disconnect()


def _trained(res: Any, lane: str) -> None:
    """Wait until `lane` is `link-ok` again after a change of its link settings (the switch
    holds it at no-link while the PHY trains), so what follows sees the fault, not training."""
    def ok() -> bool:
        rows = res.call("monitor", {"numbers": lane, "once": ""})
        return bool(rows) and str(dict(rows[0]).get("status")) == "link-ok"

    ns.wait_until(f"{lane}: link-ok after training", ok, timeout=TRAINING_CEILING_S)


def _api(ctx: Ctx) -> Any:
    import routeros_api

    assert ctx.info.switch is not None
    return routeros_api.RouterOsApiPool(ctx.info.mgmt[ctx.info.switch],
                                        username=ctx.info.routeros_user,
                                        password=ctx.info.routeros_password,
                                        port=ctx.info.api_port, plaintext_login=True)


def flap(ctx: Ctx, target: str) -> Fault:
    link, named = resolve_link(ctx, target)
    end = bounced_end(ctx, link, named)
    netns = ctx.netns(end.host)
    if any(isinstance(f.undo, FlapUndo) and f.undo.dev == end.netdev
           and f.undo.host == end.host for f in active_faults(ctx.info.name)):
        raise ns.LabError(f"cable {link.id} already flaps; `fabric lab heal` first")
    if not is_up(link_info(netns, end.netdev)):
        raise ns.LabError(f"{end.host} {end.netdev} is down (a link-down fault?): a flap "
                          "bounces a cable that is up; `fabric lab heal` first")
    far = panel_far_end(ctx, link, end.host)
    log = ctx.info.dir / "logs" / f"{end.host}.flap-{end.netdev}.log"
    log.unlink(missing_ok=True)
    far_arg = f"{names.panel_netns(ctx.info.name)}:{far}" if far else ""
    pid = ns.spawn(ns.in_ns(netns, flapper_argv(end.netdev, far_arg)), log)
    ns.wait_until(f"flapper of {end.netdev} on {end.host}",
                  lambda: log.exists() and "down #1" in log.read_text(errors="replace"),
                  timeout=20.0, failed=lambda: ns.exited_with(pid, log))
    return Fault("flap", target, f"cable {link.id} bounces at {end.host} ({end.netdev}): down "
                 f"{FLAP_DOWN_S:g} s every {FLAP_PERIOD_S:g} s (flapper pid {pid})",
                 FlapUndo(host=end.host, dev=end.netdev, pid=pid, far=far))


def undo_flap(ctx: Ctx, u: FlapUndo) -> None:
    if is_flapper(u.pid, u.dev):
        ns.kill_all([u.pid])
    link_set(ctx.netns(u.host), u.dev, "up")
    if u.far:
        link_set(names.panel_netns(ctx.info.name), u.far, "up")
