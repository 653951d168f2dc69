"""Nornir task: the CRS804's facts over the RouterOS API (connection plugin `routeros_api`).

LLDP (`/ip/neighbor`) is read last and fresh: a cabled lane that is running but lists no
current neighbour yet (the Sparks announce themselves in their own batches, in parallel) is
polled for, bounded by `LLDP_WAIT_S`; entries older than the lane's last link-up
(`last-link-up-time`, where RouterOS reports it) or superseded by a younger neighbour are
marked stale (`fabric.neighbors`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from nornir.core.task import Result, Task

from fabric.facts import BridgeFact, LaneFact, NeighborFact, SwitchFacts
from fabric.intent.model import Intent
from fabric.neighbors import age_seconds, endpoint, mark_stale
from fabric.tasks.read_switch_qos import read_switch_qos
from fabric.tasks.spark_commands import LLDP_WAIT_S

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
    """`/ip/neighbor` rows as NeighborFacts (`interface` may list the lane and its bridge;
    `age` is the time since the neighbour's last frame)."""
    return tuple(
        NeighborFact(local_port=r.get("interface", "").split(",")[0],
                     system_name=r.get("identity", ""), port_id=r.get("interface-name", ""),
                     port_descr=None,  # /ip/neighbor has no port description
                     age_s=age_seconds(r.get("age")))
        for r in rows
    )


_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                        "sep", "oct", "nov", "dec"), start=1)}
_OLD_DATE = re.compile(r"^([a-z]{3})/(\d{2})/(\d{4})$")


def _when(date_time: str) -> datetime | None:
    """A RouterOS date-time: `2026-12-01 09:30:00` (v7) or `dec/01/2026 09:30:00` (v6)."""
    date, _, clock = date_time.strip().partition(" ")
    if m := _OLD_DATE.match(date.lower()):
        month = _MONTHS.get(m.group(1))
        if month is None:
            return None
        date = f"{m.group(3)}-{month:02d}-{m.group(2)}"
    try:
        return datetime.fromisoformat(f"{date} {clock}")
    except ValueError:
        return None


def link_ages(iface: Mapping[str, Row], clock: Row) -> dict[str, float]:
    """Seconds since each interface's last link-up, from `/interface` `last-link-up-time` and
    `/system/clock` (the switch's own clock on both sides); interfaces without it are absent."""
    now = _when(f"{clock.get('date', '')} {clock.get('time', '')}")
    if now is None:
        return {}
    out: dict[str, float] = {}
    for name, row in iface.items():
        up = _when(row.get("last-link-up-time") or "")
        if up is not None and up <= now:
            out[name] = (now - up).total_seconds()
    return out


def _fresh_neighbors(api: Any, intent: Intent, waited: Iterable[str],
                     link_age: Mapping[str, float]) -> tuple[NeighborFact, ...]:
    """`/ip/neighbor`, stale entries marked; re-read (bounded by LLDP_WAIT_S) while a lane in
    `waited` lists no current neighbour yet and others do (no lane with one: LLDP is not
    spoken here, nothing to wait for)."""
    deadline = time.monotonic() + LLDP_WAIT_S
    want = set(waited)
    while True:
        found = mark_stale(build_neighbors(_rows(api, "/ip/neighbor")),
                           lambda n: endpoint(intent, n.system_name, n.port_id), link_age)
        heard = {n.local_port for n in found if not n.stale}
        if not heard or want <= heard or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def _cabled(intent: Intent) -> list[str]:
    sw = intent.switch
    return [lane.name for lane in sw.lanes if lane.link_id is not None] if sw else []


def collect_switch_facts(task: Task, intent: Intent, narrow: bool = False) -> Result:
    """Collect SwitchFacts: identity, version and board, every lane's settings and state
    (`monitor once` on all of them, in one call), bridges with their ports and hw-offload,
    LLDP neighbors (fresh, stale entries marked) and whether LLDP discovery is on.

    `narrow`: only what `fabric gate` compares: the cabled lanes' state, MTU and LLDP
    neighbours. Read-only; a dry run collects too.
    """
    api = task.host.get_connection("routeros_api", task.nornir.config)
    iface = {r["name"]: r for r in _rows(api, "/interface")}
    clock = next(iter(_rows(api, "/system/clock")), {}) if any(
        "last-link-up-time" in r for r in iface.values()) else {}
    cabled = _cabled(intent)
    identity, resource, discovery = "", {}, {}
    bridges: list[dict[str, str]] = []
    ports: dict[str, dict[str, str]] = {}
    if narrow:
        eth = [{"name": name} for name in cabled]
    else:
        identity = next(iter(_rows(api, "/system/identity")), {}).get("name", "")
        resource = next(iter(_rows(api, "/system/resource")), {})
        eth = _rows(api, "/interface/ethernet")
        bridges = _rows(api, "/interface/bridge")
        ports = {p["interface"]: p for p in _rows(api, "/interface/bridge/port")}
        discovery = next(iter(_rows(api, "/ip/neighbor/discovery-settings")), {})
    monitor = monitor_lanes(api, [r["name"] for r in eth])
    lanes = {
        r["name"]: build_lane(r, iface.get(r["name"], {}), monitor.get(r["name"], {}),
                              ports.get(r["name"]))
        for r in eth
    }
    running = [name for name in cabled if name in lanes and lanes[name].running]
    lldp_on = ("lldp" in discovery["protocol"].split(",")) if "protocol" in discovery else None
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
        neighbors=_fresh_neighbors(api, intent, running if lldp_on is not False else [],
                                   link_ages(iface, clock)),
        lldp_enabled=lldp_on,
        # lossless topologies only: the QoS menus, for qos.consistent (7 API calls)
        qos=(read_switch_qos(api, resource.get("version", ""), discovery)
             if intent.lossless and not narrow else None),
    )
    return Result(host=task.host, result=facts, changed=False)
