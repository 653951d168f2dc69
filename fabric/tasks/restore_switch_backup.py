"""Nornir task: put the switch's touched RouterOS items back as the push backup recorded."""

from __future__ import annotations

from typing import Any

from nornir.core.task import Result, Task

from fabric.push.probe import SwitchSnapshot
from fabric.tasks.push_shell import ros_call, ros_rows, routeros

LANE_KEYS = ("speed", "auto-negotiation", "fec-mode", "l2mtu", "mtu")
PORT_KEYS = ("bridge", "hw", "disabled")
DISCOVERY_KEYS = ("protocol", "lldp-dcbx")
ETH, BRIDGE, PORT, DISC = ("/interface/ethernet", "/interface/bridge", "/interface/bridge/port",
                           "/ip/neighbor/discovery-settings")


def restore_switch_backup(task: Task, backup: SwitchSnapshot, lanes: tuple[str, ...],
                          bridge: str) -> Result:
    """Undo push on `lanes` (settings, bridge ports), the bridge if push made it, LLDP."""
    api = routeros(task)
    done: list[str] = []

    def call(path: str, action: str, args: dict[str, str]) -> None:
        ros_call(api, path, action, args)
        done.append(f"{path} {action} " + " ".join(f"{k}={v}" for k, v in args.items()))

    before_ports = {p["interface"]: p for p in backup.rows.get(PORT, [])}
    for port in ros_rows(api, PORT):
        if port.get("interface") not in lanes:
            continue
        old = before_ports.get(port["interface"])
        if old is None:
            call(PORT, "remove", {"numbers": port["id"]})
        elif changed := _changed(old, port, PORT_KEYS):
            call(PORT, "set", {"numbers": port["id"], **changed})
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


def _changed(old: dict[str, Any], now: dict[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    """The keys whose value differs, with the value to put back."""
    return {k: str(old[k]) for k in keys if k in old and old.get(k) != now.get(k)}
