"""Read the switch's QoS (for `qos.consistent`) over an open RouterOS API session: the QoS
menus' rows, and the fact they make (push reads the same rows to plan its QoS calls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from routeros_api.exceptions import RouterOsApiCommunicationError

from fabric.devices.crs804.platform import (
    MAP_IP,
    PFC,
    PORT,
    PROFILE,
    QOS_PATHS,
    QUEUE,
    SETTINGS,
    SWITCH,
)
from fabric.facts import SwitchQosFact, SwitchQosPort
from fabric.remote.shell import ros_rows


def read_switch_qos(api: Any, version: str,
                    discovery: Mapping[str, str] | None = None) -> SwitchQosFact:
    """The switch chip's QoS offload, DSCP map, queues, lossless classes and every port's trust
    and PFC, from the QoS menus (read-only); a RouterOS without them gives a fact with `error`
    (e.g. `no such command prefix` below 7.15). `discovery`: the discovery-settings row
    already read (LLDP DCBX)."""
    rows, error = read_qos_rows(api)
    if error is not None:
        return switch_qos_fact({}, version, error=f"RouterOS {version}: {error}")
    return switch_qos_fact(rows, version, discovery)


def read_qos_rows(api: Any) -> tuple[dict[str, list[dict[str, str]]], str | None]:
    """Rows of every QoS menu (QOS_PATHS); on the first menu RouterOS does not have, the rows
    read so far and its error (e.g. `no such command prefix` below 7.15)."""
    rows: dict[str, list[dict[str, str]]] = {}
    for path in QOS_PATHS:
        try:
            rows[path] = ros_rows(api, path)
        except RouterOsApiCommunicationError as exc:  # a trap: this RouterOS lacks the menu
            message = exc.original_message
            text = message.decode(errors="replace") if isinstance(message, bytes) else str(exc)
            return rows, f"{path}: {text}"
    return rows, None


def _truthy(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() in ("true", "yes")


def dscp_values(text: str) -> list[int]:
    """`1,3-4` -> [1, 3, 4] (unreadable parts are skipped)."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            out += list(range(int(low), int(high or low) + 1))
    return out


def qos_classes(text: str | None) -> tuple[int, ...]:
    """`3,1` -> (1, 3): the traffic classes of a RouterOS list (unreadable parts skipped)."""
    return tuple(sorted({int(p) for p in (text or "").split(",") if p.strip().isdigit()}))


def switch_qos_fact(rows: Mapping[str, list[dict[str, str]]], version: str,
                    discovery: Mapping[str, str] | None = None,
                    error: str | None = None) -> SwitchQosFact:
    """The switch's QoS from its menu rows: what a trusted DSCP maps to (default map rows,
    7.23+ automap profiles), queues with ECN / strict priority, lossless classes, and each
    port's trust and PFC traffic classes."""
    if error is not None:
        return SwitchQosFact(offloaded=None, error=error)
    chip = next(iter(rows.get(SWITCH, [])), {})
    profiles = {r.get("name", ""): r for r in rows.get(PROFILE, [])}
    tc_of = {name: int(r["traffic-class"]) for name, r in profiles.items()
             if r.get("traffic-class", "").isdigit()}
    dscp: dict[int, int] = {}
    automap = [r for r in profiles.values() if _truthy(r.get("automap")) and r.get("dscp")]
    for r in automap:
        if r["dscp"].isdigit() and r.get("name") in tc_of:
            dscp[int(r["dscp"])] = tc_of[r["name"]]
    for m in rows.get(MAP_IP, []):  # explicit rows of the default map win over automap
        if (m.get("map") or "default") != "default" or _truthy(m.get("disabled")):
            continue
        if m.get("profile") in tc_of:
            for d in dscp_values(m.get("dscp", "")):
                dscp[d] = tc_of[m["profile"]]
    queues = [q for q in rows.get(QUEUE, []) if q.get("tx-manager", "default") == "default"]
    pfc = {p.get("name", ""): qos_classes(p.get("traffic-class")) for p in rows.get(PFC, [])}
    ports = {p["name"]: SwitchQosPort(p["name"], p.get("trust-l3"), p.get("pfc"),
                                      pfc.get(p.get("pfc") or "", ()))
             for p in rows.get(PORT, []) if p.get("name")}
    settings = next(iter(rows.get(SETTINGS, [])), {})
    disc = discovery or {}
    return SwitchQosFact(
        offloaded=_truthy(chip.get("qos-hw-offloading")),
        dscp_classes=tuple(sorted(dscp.items())),
        ecn_classes=tuple(sorted(int(q["traffic-class"]) for q in queues
                                 if _truthy(q.get("ecn")) and _tc(q))),
        strict_classes=tuple(sorted(int(q["traffic-class"]) for q in queues
                                    if q.get("schedule") == "strict-priority" and _tc(q))),
        lossless_classes=qos_classes(settings.get("lossless-traffic-class")),
        ports=ports, lldp_dcbx=_truthy(disc.get("lldp-dcbx")))


def _tc(row: Mapping[str, str]) -> bool:
    return row.get("traffic-class", "").isdigit()
