"""Nornir task: the CRS804's facts over the RouterOS API (connection plugin `routeros_api`).

LLDP (`/ip/neighbor`) is read last and fresh: a cabled lane that is running but lists no
fresh neighbour yet (the Sparks announce themselves in their own batches, in parallel) is
polled for, bounded by `SWITCH_LLDP_WAIT_S`, with the lanes waited for shown as progress;
entries not certainly heard after the lane's last link change (`last-link-up-time` and
`last-link-down-time`, where RouterOS reports them) are marked stale (`fabric.neighbors`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from nornir.core.task import Result, Task

from fabric.devices.contract import FINGERPRINT
from fabric.facts import BridgeFact, LaneFact, NeighborFact, SwitchFacts
from fabric.intent.model import Intent
from fabric.neighbors import age_seconds, endpoint, mark_stale

Row = Mapping[str, str]

#: What each read of the switch is for (check families, `FINGERPRINT`); `/interface`, the
#: lanes' `monitor once` and `/ip/neighbor` are always read (the fingerprint needs them).
#: Identity and resource (version, board) only `fabric facts` shows.
READS: dict[str, frozenset[str]] = {
    "/interface/ethernet": frozenset({"link"}),  # speed, auto-negotiation, FEC, disabled
    "/interface/bridge": frozenset({"switch"}),
    "/interface/bridge/port": frozenset({"switch"}),
    # LLDP on; LLDP DCBX and the version (which QoS menus exist) for the QoS read
    "/ip/neighbor/discovery-settings": frozenset({"cabling", "qos", "counters"}),
    "/system/resource": frozenset({"qos", "counters"}),
}
#: Who needs the switch's QoS menus (`read_switch_qos`, where the topology is lossless):
#: qos, and counters (pause frames are expected on the lanes' PFC classes).
QOS_FAMILIES = frozenset({"qos", "counters"})
#: The longest the switch read waits for fresh LLDP on its running cabled lanes, seconds: a
#: lane that changed a moment ago needs its neighbour heard `ROS_MARGIN_S` after the change.
SWITCH_LLDP_WAIT_S = 6.0


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


def _print_all(api: Any, paths: Iterable[str]) -> dict[str, list[dict[str, str]]]:
    """`print` of every menu in `paths` at once: each sent tagged before any answer is read
    (the API pipelines them), so the reads cost one round trip, not one each."""
    pending = {path: api.get_resource(path).get_async() for path in paths}
    return {path: [dict(r) for r in promise.get()] for path, promise in pending.items()}


def _monitor_async(api: Any, lanes: list[str]) -> Any:
    return api.get_resource("/interface/ethernet").call_async(
        "monitor", {"numbers": ",".join(lanes), "once": ""}) if lanes else None


def _monitor_rows(lanes: list[str], promise: Any) -> dict[str, dict[str, str]]:
    if promise is None:
        return {}
    rows = list(promise.get())
    out = {str(dict(r).get("name", "")): dict(r) for r in rows}
    if len(lanes) == 1 and rows and "" in out:  # a single-lane reply may omit the name
        out = {lanes[0]: out[""]}
    return out


def monitor_lanes(api: Any, lanes: list[str]) -> dict[str, dict[str, str]]:
    """`monitor once` for every lane in ONE API call (one `!re` per interface, by name)."""
    return _monitor_rows(lanes, _monitor_async(api, lanes))


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
    """Seconds since each interface's last link change (the later of `last-link-up-time` and
    `last-link-down-time` in `/interface`) by `/system/clock` (the switch's own clock on both
    sides); interfaces that report neither are absent."""
    now = _when(f"{clock.get('date', '')} {clock.get('time', '')}")
    if now is None:
        return {}
    out: dict[str, float] = {}
    for name, row in iface.items():
        times = [t for key in ("last-link-up-time", "last-link-down-time")
                 if (t := _when(row.get(key) or "")) is not None and t <= now]
        if times:
            out[name] = (now - max(times)).total_seconds()
    return out


def _fresh_neighbors(api: Any, intent: Intent, waited: Iterable[str],
                     link_age: Mapping[str, float], first: list[dict[str, str]],
                     began: float, first_sent: float,
                     on_wait: Callable[[str], None] | None = None) -> tuple[NeighborFact, ...]:
    """`/ip/neighbor` (`first`: its first read, sent at `first_sent` with the `link_age`
    read), stale entries marked (`began`: when the collection began, monotonic); re-read
    (bounded by SWITCH_LLDP_WAIT_S, `on_wait` told which lanes it waits for) while a lane in
    `waited` lists no fresh neighbour yet (no entry at all on any lane: LLDP is not spoken
    here, nothing to wait for)."""
    deadline = first_sent + SWITCH_LLDP_WAIT_S
    want = set(waited)
    rows: list[dict[str, str]] | None = first
    sent = first_sent
    while True:
        if rows is None:
            sent = time.monotonic()  # before the read: the ages are at least this recent
            rows = _rows(api, "/ip/neighbor")
        since = sent - first_sent  # the link ages were read with the first read
        found = mark_stale(build_neighbors(rows),
                           lambda n: endpoint(intent, n.system_name, n.port_id),
                           {lane: age + since for lane, age in link_age.items()},
                           heard_within_s=sent - began)
        rows = None
        heard = {n.local_port for n in found if not n.stale}
        if not found or want <= heard or time.monotonic() >= deadline:
            return found
        if on_wait is not None:
            on_wait("waiting for fresh LLDP on " + ", ".join(sorted(want - heard)))
        time.sleep(0.1)


def _cabled(intent: Intent) -> list[str]:
    sw = intent.switch
    return [lane.name for lane in sw.lanes if lane.link_id is not None] if sw else []


def collect_switch_facts(task: Task, intent: Intent, narrow: bool = False,
                         families: Collection[str] | None = None,
                         on_wait: Callable[[str], None] | None = None,
                         began: float | None = None) -> Result:
    """Collect SwitchFacts: identity, version and board, every lane's settings and state
    (`monitor once` on all of them, in one call), bridges with their ports and hw-offload,
    LLDP neighbors (fresh, stale entries marked), whether LLDP discovery is on and, where
    the topology is lossless, the switch's QoS (`read_switch_qos`).

    `families`: only what those check families judge plus the fingerprint's inputs (`READS`;
    the cabled lanes alone unless `link` is judged); None: everything. `narrow`: only what
    `fabric gate` compares (the fingerprint: the cabled lanes' state, MTU and LLDP
    neighbours). Read-only; a dry run collects too.
    """
    began = time.monotonic() if began is None else began
    wanted = frozenset({FINGERPRINT}) if narrow else (
        None if families is None else frozenset(families))
    api = task.host.get_connection("routeros_api", task.nornir.config)
    got = _print_all(api, _reads(wanted))  # one round trip for every menu
    facts = _build_facts(task.host.name, api, intent, wanted, got, began, on_wait)
    return Result(host=task.host, result=facts, changed=False)


def _reads(wanted: frozenset[str] | None) -> list[str]:
    """The menus to print: `/interface`, identity for everything, what `wanted` needs."""
    reads = ["/interface"]
    if wanted is None:
        reads += ["/system/identity"]
    return reads + [path for path in READS
                    if wanted is None or not READS[path].isdisjoint(wanted)]


def _live(api: Any, names: list[str], iface: Mapping[str, Row]
          ) -> tuple[dict[str, dict[str, str]], list[dict[str, str]], dict[str, str], float]:
    """At once: the lanes' state, the first LLDP read and (where the switch tells link-up
    times) its clock; (monitor rows, first neighbours, clock, when the LLDP read was sent)."""
    monitoring = _monitor_async(api, names)
    first_sent = time.monotonic()
    neighbors_read = api.get_resource("/ip/neighbor").get_async()
    clock_read = api.get_resource("/system/clock").get_async() if any(
        "last-link-up-time" in r or "last-link-down-time" in r for r in iface.values()) else None
    monitor = _monitor_rows(names, monitoring)
    first_neighbors = [dict(r) for r in neighbors_read.get()]
    clock = next(iter(dict(r) for r in clock_read.get()), {}) if clock_read else {}
    return monitor, first_neighbors, clock, first_sent


def _build_facts(host: str, api: Any, intent: Intent, wanted: frozenset[str] | None,
                 got: dict[str, list[dict[str, str]]], began: float,
                 on_wait: Callable[[str], None] | None) -> SwitchFacts:
    cabled = _cabled(intent)
    iface = {r["name"]: r for r in got["/interface"]}
    identity = next(iter(got.get("/system/identity", [])), {}).get("name", "")
    resource = next(iter(got.get("/system/resource", [])), {})
    eth = (got["/interface/ethernet"] if "/interface/ethernet" in got
           else [{"name": name} for name in cabled])
    bridges = got.get("/interface/bridge", [])
    ports = {p["interface"]: p for p in got.get("/interface/bridge/port", [])}
    discovery = next(iter(got.get("/ip/neighbor/discovery-settings", [])), {})
    monitor, first_neighbors, clock, first_sent = _live(api, [r["name"] for r in eth], iface)
    ages = link_ages(iface, clock)
    lanes = {
        r["name"]: dataclasses.replace(
            build_lane(r, iface.get(r["name"], {}), monitor.get(r["name"], {}),
                       ports.get(r["name"])), link_change_age_s=ages.get(r["name"]))
        for r in eth
    }
    running = [name for name in cabled if name in lanes and lanes[name].running]
    lldp_on = ("lldp" in discovery["protocol"].split(",")) if "protocol" in discovery else None
    qos = None
    if intent.lossless and (wanted is None or not QOS_FAMILIES.isdisjoint(wanted)):
        from fabric.devices.crs804.read_switch_qos import read_switch_qos

        qos = read_switch_qos(api, resource.get("version", ""), discovery)
    return SwitchFacts(
        host=host,
        identity=identity,
        version=resource.get("version", ""),
        board=resource.get("board-name"),
        lanes=lanes,
        bridges=tuple(
            BridgeFact(name=b["name"], mtu=_int(b.get("actual-mtu", b.get("mtu"))),
                       ports=tuple(p for p, row in ports.items() if row.get("bridge") == b["name"]))
            for b in bridges),
        neighbors=_fresh_neighbors(api, intent, running if lldp_on is not False else [],
                                   ages, first_neighbors, began, first_sent, on_wait),
        lldp_enabled=lldp_on,
        qos=qos,
    )
