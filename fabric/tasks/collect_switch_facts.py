"""Nornir task: the CRS804's facts over the RouterOS API (connection plugin `routeros_api`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nornir.core.task import Result, Task

from fabric.facts import BridgeFact, LaneFact, NeighborFact, SwitchFacts
from fabric.intent.model import Intent

Row = Mapping[str, str]


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.strip().lower() in ("true", "yes")


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # "auto"


def _rows(api: Any, path: str) -> list[dict[str, str]]:
    return [dict(r) for r in api.get_resource(path).get()]


def monitor_lanes(api: Any, lanes: list[str]) -> dict[str, dict[str, str]]:
    """`monitor once` for every lane in ONE API call (one `!re` per interface, by name)."""
    if not lanes:
        return {}
    rows = api.get_resource("/interface/ethernet").call(
        "monitor", {"numbers": ",".join(lanes), "once": ""})
    out = {str(dict(r).get("name", "")): dict(r) for r in rows}
    if len(lanes) == 1 and rows and "" in out:  # a single-lane reply may omit the name
        out = {lanes[0]: out[""]}
    return out


def build_lane(eth: Row, iface: Row, mon: Row, port: Row | None) -> LaneFact:
    """One LaneFact from its /interface/ethernet, /interface, monitor and bridge-port rows."""
    return LaneFact(
        name=eth["name"],
        disabled=bool(_bool(eth.get("disabled"))),
        running=bool(_bool(iface.get("running", eth.get("running")))),
        mtu=_int(iface.get("mtu", eth.get("mtu"))),
        l2mtu=_int(iface.get("l2mtu", eth.get("l2mtu"))),
        max_l2mtu=_int(iface.get("max-l2mtu")),
        speed=eth.get("speed"),
        auto_negotiation=_bool(eth.get("auto-negotiation")),
        fec_mode=eth.get("fec-mode"),
        status=mon.get("status"),
        rate=mon.get("rate"),
        bridge=port.get("bridge") if port else None,
        hw_offload=_bool(port.get("hw-offload")) if port else None,
    )


def build_neighbors(rows: Iterable[Row]) -> tuple[NeighborFact, ...]:
    """`/ip/neighbor` rows as NeighborFacts (`interface` may list the lane and its bridge)."""
    return tuple(
        NeighborFact(local_port=r.get("interface", "").split(",")[0],
                     system_name=r.get("identity", ""), port_id=r.get("interface-name", ""),
                     port_descr=None)  # /ip/neighbor has no port description
        for r in rows
    )


def collect_switch_facts(task: Task, intent: Intent) -> Result:
    """Collect SwitchFacts: identity, version and board, every lane's settings and state
    (`monitor once` on all of them, in one call), bridges with their ports and hw-offload,
    LLDP neighbors and whether LLDP discovery is on. Read-only; a dry run collects too.
    """
    api = task.host.get_connection("routeros_api", task.nornir.config)
    identity = next(iter(_rows(api, "/system/identity")), {}).get("name", "")
    resource = next(iter(_rows(api, "/system/resource")), {})
    eth = _rows(api, "/interface/ethernet")
    iface = {r["name"]: r for r in _rows(api, "/interface")}
    bridges = _rows(api, "/interface/bridge")
    ports = {p["interface"]: p for p in _rows(api, "/interface/bridge/port")}
    monitor = monitor_lanes(api, [r["name"] for r in eth])
    lanes = {
        r["name"]: build_lane(r, iface.get(r["name"], {}), monitor.get(r["name"], {}),
                              ports.get(r["name"]))
        for r in eth
    }
    discovery = next(iter(_rows(api, "/ip/neighbor/discovery-settings")), {})
    facts = SwitchFacts(
        host=task.host.name,
        identity=identity,
        version=resource.get("version", ""),
        board=resource.get("board-name"),
        lanes=lanes,
        bridges=tuple(
            BridgeFact(name=b["name"], mtu=_int(b.get("actual-mtu", b.get("mtu"))),
                       ports=tuple(p for p, row in ports.items() if row.get("bridge") == b["name"]))
            for b in bridges),
        neighbors=build_neighbors(_rows(api, "/ip/neighbor")),
        lldp_enabled=("lldp" in discovery["protocol"].split(",")) if "protocol" in discovery
        else None,
    )
    return Result(host=task.host, result=facts, changed=False)
