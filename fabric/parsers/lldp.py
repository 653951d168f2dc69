"""``lldpcli -f json show neighbors`` reader.

lldpd's ``json`` format collapses one-element lists: with one interface ``lldp.interface`` is
an object ``{ifname: {...}}``, with several it is a list of such objects; likewise ``chassis``
is ``{name: {...}}`` (or the bare chassis when it has no name) and ``mgmt-ip`` is a string or
a list. All shapes are read the same. No neighbors (``{"lldp": {}}``) is a valid, empty result.
"""

from __future__ import annotations

from typing import Any

from fabric.parsers.jsonread import JsonView, load_json
from fabric.parsers.kind import Kind
from fabric.parsers.records import LldpNeighbor, Record


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _value(view: JsonView, obj: Any, key: str, where: str) -> str | None:
    """lldpd prints ``"id": {"type": "mac", "value": "..."}`` or, for descr, a bare string."""
    item = obj.get(key) if isinstance(obj, dict) else None
    if item is None:
        return None
    if isinstance(item, dict):
        return view.get(item, "value", str, f"{where}.{key}")
    if isinstance(item, list) and item and isinstance(item[0], dict):
        return view.get(item[0], "value", str, f"{where}.{key}")
    return view.check(item, str, f"{where}.{key}")


def read_lldpcli(kind: str, raw: str) -> list[Record]:
    """One LldpNeighbor per (local interface, neighbor)."""
    view = JsonView(kind, raw)
    data = view.check(load_json(kind, raw, ["lldpcli"]), dict, "top level")
    lldp = view.get(data, "lldp", dict)
    interfaces = lldp.get("interface")
    if interfaces is None:
        return []
    neighbors: list[Record] = []
    for entry in _as_list(interfaces):
        entry = view.check(entry, dict, "lldp.interface")
        for ifname, body in entry.items():
            for neighbor in _as_list(body):
                neighbors.append(_neighbor(view, ifname, neighbor))
    return neighbors


def _neighbor(view: JsonView, ifname: str, body: Any) -> LldpNeighbor:
    where = f"lldp.interface.{ifname}"
    body = view.check(body, dict, where)
    chassis = view.opt(body, "chassis", dict, where) or {}
    name: str | None = None
    if "id" not in chassis and len(chassis) == 1:
        name, chassis = next(iter(chassis.items()))
        chassis = view.check(chassis, dict, f"{where}.chassis")
    port = view.opt(body, "port", dict, where) or {}
    mgmt = chassis.get("mgmt-ip", [])
    return LldpNeighbor(
        local_interface=ifname,
        chassis_name=name,
        chassis_id=_value(view, chassis, "id", f"{where}.chassis"),
        port_id=_value(view, port, "id", f"{where}.port"),
        port_descr=_value(view, port, "descr", f"{where}.port"),
        mgmt_ips=tuple(view.check(ip, str, f"{where}.chassis.mgmt-ip") for ip in _as_list(mgmt)),
    )


KINDS = (
    Kind("lldpcli", "linux", read_lldpcli, "lldpcli -f json show neighbors", template=False,
         empty_ok=True),
)
