"""RouterOS commands for port modes, and where a lane sits on the switch."""

from __future__ import annotations

from fabric.intent.model import Intent, Link
from fabric.intent.platforms import SwitchModel, switch_model


def model_of(intent: Intent) -> SwitchModel | None:
    return switch_model(intent.switch.model) if intent.switch else None


def port_of(intent: Intent, link: Link) -> str | None:
    """The switch port (`qsfp56-dd-2`) a link's lane belongs to, if it has one."""
    model = model_of(intent)
    if model is None or link.switch_lane is None:
        return None
    split = model.split_lane(link.switch_lane)
    return model.port_name.format(port=split[0]) if split else None


def is_breakout(intent: Intent, link: Link) -> bool:
    """True when the link is one leg of a split port (a breakout cable)."""
    model, port = model_of(intent), port_of(intent, link)
    if model is None or port is None or intent.switch is None:
        return False
    mode = intent.switch.port_modes.get(port)
    return mode is not None and len(model.modes[mode].first_lanes) > 1


def mode_commands(intent: Intent, port: str, old: str | None) -> list[str]:
    """Set `port` to the intent's mode (speed forced per group, fec91, MTU, bridge)."""
    sw, model = intent.switch, model_of(intent)
    assert sw is not None and model is not None
    mode = model.modes[sw.port_modes[port]]
    port_no = model.port_names().index(port) + 1
    old_first = set(model.modes[old].first_lanes) if old else set()
    cmds: list[str] = []
    for first in mode.first_lanes:
        lane = model.lane(port_no, first)
        an = "yes" if mode.auto_negotiation else "no"
        speed = "" if mode.auto_negotiation else f" speed={mode.speed}"
        cmds.append(f"/interface/ethernet/set {lane} auto-negotiation={an}{speed} "
                    f"fec-mode={model.fec_mode} mtu={sw.mtu} l2mtu={sw.l2mtu}")
        if first not in old_first:
            cmds.append(f"/interface/bridge/port/add bridge={sw.bridge} interface={lane}")
    for first in sorted(old_first - set(mode.first_lanes)):
        lane = model.lane(port_no, first)
        cmds.append(f"/interface/bridge/port/remove [find interface={lane}]")
    return cmds


def prep_commands(intent: Intent) -> list[str]:
    """Bring an idle switch to the intent's bridge and MTU (before any port is used)."""
    sw = intent.switch
    assert sw is not None
    return ["/system/package/print  # switch-marvell present, RouterOS >= 7.15 (7.17 advised)",
            "/export terse file=pre-migration",
            f"/interface/bridge/add name={sw.bridge} protocol-mode=none  # the one offloaded "
            "bridge (skip if present)"]
