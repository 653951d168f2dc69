"""Parse ``lldpcli -f json show neighbors`` (one neighbour: objects; several: lists)."""

from __future__ import annotations

import json
from typing import Any

from .backend import Neighbor


def _entries(node: Any) -> list[tuple[str, dict[str, Any]]]:
    """``{"eth0": {...}}`` or ``[{"eth0": {...}}, ...]`` -> ``[("eth0", {...}), ...]``."""
    items = node if isinstance(node, list) else [node]
    out: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if isinstance(item, dict):
            out.extend((k, v) for k, v in item.items() if isinstance(v, dict))
    return out


def _first(node: Any) -> Any:
    return node[0] if isinstance(node, list) and node else node


def _value(node: Any) -> str:
    node = _first(node)
    if isinstance(node, dict):
        return str(node.get("value", ""))
    return "" if node is None else str(node)


def _chassis(node: Any) -> tuple[str, dict[str, Any]]:
    """lldpd keys the chassis by its name when it has one, else the body is direct."""
    node = _first(node)
    if not isinstance(node, dict):
        return "", {}
    if "id" in node or "descr" in node:
        return "", node
    for name, body in node.items():
        if isinstance(body, dict):
            return name, body
    return "", {}


def parse_neighbors(text: str) -> list[Neighbor]:
    """Neighbours from lldpcli's JSON, whichever of its shapes it used."""
    data = json.loads(text) if text.strip() else {}
    lldp = _first(data.get("lldp", {})) if isinstance(data, dict) else {}
    if not isinstance(lldp, dict):
        return []
    neighbors: list[Neighbor] = []
    for local, body in _entries(lldp.get("interface", [])):
        name, chassis = _chassis(body.get("chassis", {}))
        cid = _first(chassis.get("id", {}))
        mac = _value(cid) if isinstance(cid, dict) and cid.get("type") == "mac" else ""
        port = _first(body.get("port", {})) or {}
        pid = _first(port.get("id", {})) if isinstance(port, dict) else {}
        remote_port = _value(pid) if isinstance(pid, dict) and pid.get("type") == "ifname" else ""
        if not remote_port and isinstance(port, dict):
            remote_port = _value(port.get("descr", "")) or _value(pid)
        mgmt = chassis.get("mgmt-ip", "")
        neighbors.append(
            Neighbor(
                interface=local,
                identity=name or _value(chassis.get("name", "")),
                mac_address=mac.upper(),
                interface_name=remote_port,
                system_description=_value(chassis.get("descr", "")),
                address=_value(mgmt[0] if isinstance(mgmt, list) and mgmt else mgmt),
            )
        )
    return neighbors
