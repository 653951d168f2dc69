"""Counter snapshots around the active probes (`counters.*` judges their deltas).

A Spark's cabled twins are read in ONE batched command on its open SSH session: `ip -s -s -j
link` (kernel counters, `carrier_changes`), `ethtool -S` per twin and the RDMA ports'
`hw_counters`. All are world-readable, so a non-root login needs no sudo. The switch's cabled
lanes are read with two API calls on its open connection: `/interface print stats` and
`/interface/ethernet print stats`. A source that cannot be read is recorded with the reason
(`PortCounters.unavailable`), and a counter that a source does not list is left out: nothing
is ever filled in as zero.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from fabric.errors import ParseError
from fabric.facts import (
    ETHERNET,
    ETHTOOL,
    INTERFACE,
    IP,
    RDMA,
    CounterSnapshot,
    CounterWindow,
    Facts,
    PortCounters,
)
from fabric.intent.model import Intent
from fabric.parsers import parse
from fabric.parsers.records import EthtoolCounter, IpLinkStats, RdmaHwCounter
from fabric.remote.batch import JobOutput, batch_script, split_batch
from fabric.remote.exec import exec_script, spark_session
from fabric.remote.runner import run
from fabric.remote.shell import routeros

IP_STATS = "ip -s -s -j link show"
#: The RDMA devices' hw_counters; a host without any (no RDMA device, a lab Spark) starts no
#: `grep` for them (the shell's glob finds none: a process saved, about 2 ms of a lab Spark).
HW_COUNTERS_FILES = "/sys/class/infiniband/*/ports/*/hw_counters/*"
HW_COUNTERS_GREP = f"grep -s -H . {HW_COUNTERS_FILES}"
HW_COUNTERS = f'set -- {HW_COUNTERS_FILES}; [ -e "$1" ] || exit 0; {HW_COUNTERS_GREP}'
RDMA_PORT = 1  # a CX-7 RDMA device has one port; hw_counters live under ports/1
SPARK_TIMEOUT_S = 30.0

#: The RouterOS menu of each switch source, read with `print stats`.
_MENUS = {INTERFACE: "/interface", ETHERNET: "/interface/ethernet"}
#: RouterOS counter attributes: everything `print stats` prints under these prefixes.
_ROS_COUNTER_PREFIXES = ("rx-", "tx-", "fp-rx-", "fp-tx-", "rs-fec-", "fc-fec-")
_ROS_COUNTERS = frozenset({"link-downs"})

Snapshot = Callable[[], dict[str, CounterSnapshot]]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def spark_jobs(netdevs: Sequence[str]) -> list[str]:
    """The jobs of one Spark's batch: kernel stats, hw_counters, then ethtool -S per twin."""
    return [IP_STATS, HW_COUNTERS, *(f"ethtool -S {shlex.quote(n)}" for n in netdevs)]


def _why(job: JobOutput, command: str) -> str:
    first = next((ln.strip() for ln in job.text.splitlines() if ln.strip()), "")
    if job.exit_code is None:
        return f"`{command}`: no output came back"
    return f"`{command}`: {first or 'no output'} (exit {job.exit_code})"


def _parse_ip(job: JobOutput) -> tuple[dict[str, dict[str, int]], str | None]:
    if job.exit_code != 0:
        return {}, _why(job, IP_STATS)
    try:
        records = parse("ip_link_stats", job.text)
    except ParseError as exc:
        return {}, f"`{IP_STATS}`: {exc}"
    return {r.ifname: dict(r.counters) for r in records if isinstance(r, IpLinkStats)}, None


def _parse_rdma(job: JobOutput) -> tuple[dict[str, dict[str, int]], str | None]:
    # grep exits 2 when one file could not be read; what it printed is still good
    if not job.text.strip():
        return {}, "no RDMA hw_counters under /sys/class/infiniband"
    try:
        records = parse("sysfs_hw_counters", job.text)
    except ParseError as exc:
        return {}, f"`{HW_COUNTERS_GREP}`: {exc}"
    out: dict[str, dict[str, int]] = {}
    for r in records:
        if isinstance(r, RdmaHwCounter) and r.port == RDMA_PORT:
            out.setdefault(r.rdma_device, {})[r.name] = r.value
    return out, None


def _parse_ethtool(job: JobOutput, netdev: str) -> tuple[dict[str, int] | None, str | None]:
    command = f"ethtool -S {netdev}"
    if job.exit_code != 0:
        return None, _why(job, command)
    try:
        records = parse("ethtool_S", job.text)
    except ParseError as exc:
        return None, f"`{command}`: {exc}"
    return {r.name: r.value for r in records if isinstance(r, EthtoolCounter)}, None


def spark_snapshot(host: str, taken: str, twins: Sequence[tuple[str, str | None]],
                   jobs: Sequence[JobOutput]) -> CounterSnapshot:
    """A Spark's snapshot from its batch outputs (`spark_jobs` order); `twins` are (netdev,
    RDMA device or None)."""
    ip_stats, ip_why = _parse_ip(jobs[0])
    hw, hw_why = _parse_rdma(jobs[1])
    ports: dict[str, PortCounters] = {}
    for (netdev, rdma), job in zip(twins, jobs[2:], strict=True):
        values: dict[str, dict[str, int]] = {}
        missing: dict[str, str] = {}
        if netdev in ip_stats:
            values[IP] = ip_stats[netdev]
        else:
            missing[IP] = ip_why or f"{netdev} is not listed by `{IP_STATS}`"
        ethtool, why = _parse_ethtool(job, netdev)
        if ethtool is not None:
            values[ETHTOOL] = ethtool
        else:
            missing[ETHTOOL] = why or "no output"
        if rdma is None:
            missing[RDMA] = f"{netdev} has no RDMA device"
        elif rdma in hw:
            values[RDMA] = hw[rdma]
        else:
            missing[RDMA] = hw_why or f"no hw_counters for {rdma} port {RDMA_PORT}"
        ports[netdev] = PortCounters(netdev, values, missing)
    return CounterSnapshot(host, taken, ports)


def ros_counters(row: Mapping[str, Any]) -> dict[str, int]:
    """The counter attributes of one RouterOS row (`link-downs`, `rx-…`, `tx-…`), as ints."""
    out: dict[str, int] = {}
    for key, value in row.items():
        name = str(key)
        if name in _ROS_COUNTERS or name.startswith(_ROS_COUNTER_PREFIXES):
            text = value.decode() if isinstance(value, bytes) else str(value)
            if text.strip().isdigit():
                out[name] = int(text)
    return out


def switch_snapshot(host: str, taken: str, lanes: Iterable[str],
                    menus: Mapping[str, list[dict[str, Any]] | str]) -> CounterSnapshot:
    """The switch's snapshot from `print stats` rows per source (or why the call failed)."""
    by_name: dict[str, dict[str, dict[str, Any]]] = {}
    for source, rows in menus.items():
        if not isinstance(rows, str):
            by_name[source] = {str(r.get("name", "")): r for r in rows}
    ports: dict[str, PortCounters] = {}
    for lane in lanes:
        values: dict[str, dict[str, int]] = {}
        missing: dict[str, str] = {}
        for source, rows in menus.items():
            row = by_name.get(source, {}).get(lane)
            if isinstance(rows, str):
                missing[source] = rows
            elif row is None:
                missing[source] = f"{lane} is not listed by {_MENUS[source]} print stats"
            else:
                values[source] = ros_counters(row)
        ports[lane] = PortCounters(lane, values, missing)
    return CounterSnapshot(host, taken, ports)


def _print_stats(api: Any, menus: Mapping[str, str]) -> dict[str, list[dict[str, Any]] | str]:
    """`print stats` of every source's menu, sent at once (pipelined, one round trip)."""
    pending: dict[str, Any] = {}
    out: dict[str, list[dict[str, Any]] | str] = {}
    for source, menu in menus.items():
        try:
            pending[source] = api.get_resource(menu).call_async("print", {"stats": ""})
        except Exception as exc:  # an API error on one menu leaves the other readable
            out[source] = f"{menu} print stats failed: {type(exc).__name__}: {exc}"[:300]
    for source, promise in pending.items():
        try:
            out[source] = [{str(k): v for k, v in dict(r).items()} for r in promise.get()]
        except Exception as exc:  # an API error on one menu leaves the other readable
            out[source] = f"{menus[source]} print stats failed: {type(exc).__name__}: {exc}"[:300]
    return {source: out[source] for source in menus}


def spark_twins(intent: Intent, host: str,
                rdma_of: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """A Spark's cabled twins with their RDMA device (`rdma_of`: netdev -> device, from the
    facts; else the port map's)."""
    return [(p.netdev, rdma_of.get(p.netdev) or p.rdma or None) for p in intent.interfaces(host)]


def spark_script(intent: Intent, host: str) -> str:
    """The one batched command that reads a Spark's counters (`spark_jobs` of its twins);
    the tools it runs are standard (`ip`, `grep`, `ethtool` in /usr/sbin), so it needs no
    login environment, only the sbin directories on PATH."""
    jobs = spark_jobs([p.netdev for p in intent.interfaces(host)])
    return 'export PATH="$PATH:/usr/sbin:/sbin"\n' + batch_script(jobs)


def read_spark_script(intent: Intent, host: str, taken: str, output: str,
                      rdma_of: Mapping[str, str]) -> CounterSnapshot:
    """A Spark's snapshot from the output of its `spark_script`."""
    twins = spark_twins(intent, host, rdma_of)
    return spark_snapshot(host, taken, twins, split_batch(output, len(twins) + 2))


def read_switch(api: Any, intent: Intent, host: str) -> CounterSnapshot:
    """The switch's snapshot: its cabled lanes, two `print stats` API calls."""
    lanes = [lane.name for lane in (intent.switch.lanes if intent.switch else ())
             if lane.link_id is not None]
    taken = now()
    return switch_snapshot(host, taken, lanes, _print_stats(api, _MENUS))


def read_counters(task: Task, intent: Intent,
                  rdma_of: Mapping[str, Mapping[str, str]]) -> Result:
    """Read this host's counters on its open connection: a Spark's cabled twins (one batched
    command) or the switch's cabled lanes (two API calls). Read-only, so a dry run reads
    too. Result: a CounterSnapshot. `rdma_of` maps host -> netdev -> RDMA device (facts)."""
    host = task.host.name
    if task.host.get("role") == "switch":
        return Result(host=task.host, result=read_switch(routeros(task), intent, host))
    conn = spark_session(task)
    taken = now()
    _, out = exec_script(conn, spark_script(intent, host), SPARK_TIMEOUT_S)
    return Result(host=task.host, result=read_spark_script(intent, host, taken, out,
                                                           rdma_of.get(host, {})))


def rdma_map(facts: Facts) -> dict[str, dict[str, str]]:
    """host -> netdev -> RDMA device, from the Sparks' facts."""
    return {h: {netdev: dev for dev, netdev in sf.rdma.items()} for h, sf in facts.sparks.items()}


def snapshot_reader(nr: Nornir, intent: Intent, facts: Facts,
                    hosts: Iterable[str] | None = None) -> Snapshot:
    """A function that snapshots `hosts` (default: every host whose facts were read, Sparks
    and switch) at once, on the sessions `nr` holds open; a host that fails gets a snapshot
    with `error`. The Sparks' RDMA devices come from `facts`."""
    if hosts is None:
        hosts = set(facts.sparks) | ({facts.switch.host} if facts.switch is not None
                                     else set())
    wanted = set(hosts)
    sub = nr.filter(filter_func=lambda h: h.name in wanted)
    rdma_of = rdma_map(facts)

    def take() -> dict[str, CounterSnapshot]:
        got, errors = run(sub, read_counters, hosts=sorted(wanted), intent=intent,
                          rdma_of=rdma_of, name="counters", on_failed=True)
        out: dict[str, CounterSnapshot] = {}
        for host in sorted(wanted):
            snap = got.get(host)
            if isinstance(snap, CounterSnapshot):
                out[host] = snap
            else:
                why = errors.get(host, "no snapshot")
                out[host] = CounterSnapshot(host, now(), error=f"counters not read: {why}")
        return out

    return take


def counter_window(before: dict[str, CounterSnapshot], after: dict[str, CounterSnapshot],
                   probes: Sequence[str], wall_s: float) -> CounterWindow:
    return CounterWindow(before=before, after=after, probes=tuple(probes),
                         wall_s=round(wall_s, 3))
