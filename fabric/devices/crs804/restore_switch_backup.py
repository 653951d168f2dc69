"""Nornir task: put the switch's touched RouterOS items back as the push backup recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.crs804.platform import MAP_IP, PFC, PORT, PROFILE, QUEUE, SETTINGS, SWITCH
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.intent.platforms import roce_qos
from fabric.remote.shell import ros_call, ros_rows, routeros

LANE_KEYS = ("speed", "auto-negotiation", "fec-mode", "l2mtu", "mtu")
PORT_KEYS = ("bridge", "hw", "disabled")
DISCOVERY_KEYS = ("protocol", "lldp-dcbx")
ETH, BRIDGE, BPORT, DISC = ("/interface/ethernet", "/interface/bridge", "/interface/bridge/port",
                            "/ip/neighbor/discovery-settings")
PORT_QOS_KEYS = ("trust-l3", "trust-l2", "pfc", "profile")
QUEUE_KEYS = ("schedule", "weight", "ecn", "use-shared-buffers", "wred")
LIST_KEYS = {PFC: ("traffic-class", "rx", "tx"), MAP_IP: ("dscp", "profile", "disabled"),
             PROFILE: ("dscp", "traffic-class", "pcp", "automap")}


def restore_switch_backup(task: Task, backup: SwitchSnapshot, lanes: tuple[str, ...],
                          bridge: str, qos: bool = False) -> Result:
    """Undo push on `lanes` (settings, bridge ports), the bridge if push made it, LLDP, and
    with `qos` the lossless profile (port QoS of `lanes`, queues, QoS settings, the profiles,
    DSCP map rows and PFC profile push added, QoS offload)."""
    api = routeros(task)
    done: list[str] = []

    def call(path: str, action: str, args: dict[str, str]) -> None:
        ros_call(api, path, action, args)
        done.append(f"{path} {action} " + " ".join(f"{k}={v}" for k, v in args.items()))

    if qos:
        restore_qos(api, backup, lanes, call)

    before_ports = {p["interface"]: p for p in backup.rows.get(BPORT, [])}
    for port in ros_rows(api, BPORT):
        if port.get("interface") not in lanes:
            continue
        old = before_ports.get(port["interface"])
        if old is None:
            call(BPORT, "remove", {"numbers": port["id"]})
        elif changed := _changed(old, port, PORT_KEYS):
            call(BPORT, "set", {"numbers": port["id"], **changed})
    if backup.row(BRIDGE, name=bridge) is None:
        now = [b for b in ros_rows(api, BRIDGE) if b.get("name") == bridge]
        for b in now:
            call(BRIDGE, "remove", {"numbers": b["id"]})
    current = {r["name"]: r for r in ros_rows(api, ETH)}
    for lane in lanes:
        old = backup.row(ETH, name=lane)
        if old is not None and (changed := _changed(old, current.get(lane, {}), LANE_KEYS)):
            call(ETH, "set", {"numbers": lane, **changed})
    old_disc = backup.row(DISC)
    now_disc = (ros_rows(api, DISC) or [{}])[0]
    if old_disc is not None and (changed := _changed(old_disc, now_disc, DISCOVERY_KEYS)):
        call(DISC, "set", changed)
    return Result(host=task.host, result=done, changed=bool(done), diff="\n".join(done))


Call = Callable[[str, str, dict[str, str]], None]


def restore_qos(api: Any, backup: SwitchSnapshot, lanes: tuple[str, ...], call: Call) -> None:
    """Put the QoS menus back as the backup recorded them: ports first (they name the PFC
    profile), then queues and settings, then remove what push added (DSCP map rows before the
    profiles they name), and QoS offload last."""
    r = roce_qos()
    ours = {r.profile, r.cnp_profile}
    for port in ros_rows(api, PORT):
        if port.get("name") not in lanes:
            continue
        old = backup.row(PORT, name=port["name"])
        if old is None:
            continue
        if changed := _changed(old, port, PORT_QOS_KEYS):
            call(PORT, "set", {"numbers": port["name"], **changed})
        for key in (k for k in port if k.startswith("egress-rate-queue") and k not in old):
            call(PORT, "unset", {"numbers": port["name"], "value-name": key})
        if changed := _changed(old, port, tuple(k for k in old
                                                if k.startswith("egress-rate-queue"))):
            call(PORT, "set", {"numbers": port["name"], **changed})
    for queue in ros_rows(api, QUEUE):
        old = backup.row(QUEUE, id=queue.get("id", ""))
        if old is not None and (changed := _changed(old, queue, QUEUE_KEYS)):
            call(QUEUE, "set", {"numbers": queue["id"], **changed})
    old_settings = backup.row(SETTINGS)
    now_settings = (ros_rows(api, SETTINGS) or [{}])[0]
    if old_settings is not None and (changed := _changed(old_settings, now_settings,
                                                         ("lossless-traffic-class",))):
        call(SETTINGS, "set", changed)
    for path, name in ((PFC, r.pfc_profile), (MAP_IP, None), (PROFILE, None)):
        before = {row.get("id") for row in backup.rows.get(path, [])}
        for row in ros_rows(api, path):
            added = row.get("id") not in before
            mine = row.get("name") == name if name else (row.get("name") in ours
                                                         or row.get("profile") in ours)
            if added and mine:
                call(path, "remove", {"numbers": row["id"]})
                continue
            old = None if added else backup.row(path, id=row.get("id", ""))
            if old is not None and (changed := _changed(old, row, LIST_KEYS[path])):
                call(path, "set", {"numbers": row["id"], **changed})
    old_chip = backup.row(SWITCH)
    for chip in ros_rows(api, SWITCH):
        if old_chip is not None and (changed := _changed(old_chip, chip, ("qos-hw-offloading",))):
            call(SWITCH, "set", {"numbers": chip.get("name", chip.get("id", "")), **changed})


def _changed(old: dict[str, Any], now: dict[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    """The keys whose value differs, with the value to put back."""
    return {k: str(old[k]) for k in keys if k in old and old.get(k) != now.get(k)}
