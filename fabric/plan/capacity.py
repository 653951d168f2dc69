"""Switch ports needed against ports available; refuse plans that cannot fit, with options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fabric.errors import InputError, InputProblem
from fabric.intent.inventory import load_inventory
from fabric.intent.locate import default_inventory, resolve_topology
from fabric.intent.model import Intent
from fabric.intent.platforms import SwitchModel, spark_port_gbps, switch_model
from fabric.plan.model import Capacity


def capacity_of(intent: Intent) -> Capacity:
    """Capacity of an already-loaded intent (which the static checks keep within bounds)."""
    if intent.switch is None:
        return Capacity(None, None, 0, 0, spark_port_gbps())
    model = switch_model(intent.switch.model)
    lanes = [link for link in intent.links if link.switch_lane]
    gbps = min((link.speed_gbps for link in lanes), default=spark_port_gbps())
    return Capacity(intent.switch.host, model.name, len(lanes), model.capacity(gbps), gbps)


def options(model: SwitchModel, needed: int, gbps: int) -> list[str]:
    """What an operator can do instead, derived from the switch model's port modes."""
    cap = model.capacity(gbps)
    out = [f"keep {cap} Sparks on this {model.name} at {gbps}G and leave "
           f"{needed - cap} out"]
    for mode in sorted(model.modes.values(), key=lambda m: -len(m.first_lanes)):
        n = model.ports * len(mode.first_lanes)
        if n >= needed and mode.gbps < gbps:
            out.append(f"split every port {mode.name}: up to {n} Sparks at {mode.gbps}G each "
                       f"(a {gbps // mode.gbps}x cut in per-node bandwidth, new breakout cables)")
            break
    out.append(f"add a second {model.name} as a leaf under a spine (each leaf gives up ports "
               "for uplinks; see `fabric plan synth --nodes N --oversub R`)")
    out.append("cable the extra Spark directly to a Spark's free p1 port (off the switched "
               "fabric: no rails, not in the TP group)")
    return out


def _gbps(speed: Any) -> int:
    """A link's `speed` (e.g. "100G") in Gbit/s; the Spark port's where none (or unreadable:
    load_intent names that one)."""
    text = str(speed or "")
    return int(text[:-1]) if text[:-1].isdigit() and text.endswith("G") else spark_port_gbps()


def check_topology_file(topology: str | Path, inventory: Path | None = None) -> None:
    """Refuse (exit 2) a topology that puts more Sparks on a switch than it can take."""
    path = resolve_topology(topology)
    try:
        raw: Any = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        return  # load_intent reports it with file and line
    if not isinstance(raw, dict) or not isinstance(raw.get("switch"), dict):
        return
    host = raw["switch"].get("host")
    inv = load_inventory(inventory or default_inventory())
    sw = inv.hosts.get(str(host))
    if sw is None or sw.model is None:
        return
    try:
        model = switch_model(sw.model)
    except KeyError:
        return
    links = [link for link in raw.get("links") or [] if isinstance(link, dict)
             and any(str(link.get(e, "")).startswith(f"{host}:") for e in ("a", "b"))]
    needed = len(links)
    # the switch takes more links the slower they are (4x100G: 16 on a CRS804)
    gbps = min((_gbps(link.get("speed")) for link in links), default=spark_port_gbps())
    cap = model.capacity(gbps)
    if needed <= cap:
        return
    opts = "; ".join(f"({i}) {o}" for i, o in enumerate(options(model, needed, gbps), 1))
    raise InputError(InputProblem(
        str(path), None, "links",
        f"over capacity: {needed} Sparks need {needed} ports of {gbps}G on {host}, which "
        f"has {cap} ({model.ports} ports x {cap // model.ports} at {gbps}G). Options: {opts}"))
