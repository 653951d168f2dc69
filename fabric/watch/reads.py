"""One cycle's read of one host, on its open session: a Spark's one batch, the switch's
three pipelined API calls. Read-only; nothing on a device is reset."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from fabric.errors import ParseError
from fabric.parsers import parse
from fabric.parsers.records import LldpNeighbor
from fabric.probes.counters import now, spark_jobs, spark_snapshot
from fabric.remote.batch import batch_script, require_all, split_batch
from fabric.remote.exec import exec_script
from fabric.watch.labels import TwinLabels
from fabric.watch.readings import LinkState, Row, SparkReading, SwitchReading

#: sysfs per twin: name, mtu, speed, carrier, carrier_up_count, carrier_down_count ("-":
#: unreadable, e.g. speed or carrier of a netdev that is down).
_SYSFS_FIELDS = ("mtu", "speed", "carrier", "carrier_up_count", "carrier_down_count")
_SYSFS = ('for n in {names}; do printf "%s" "$n"; for f in {fields}; do '
          'v=$(cat "/sys/class/net/$n/$f" 2>/dev/null) || v=-; printf " %s" "${{v:--}}"; '
          'done; echo; done')


#: The GPU's temperature and power draw (the GB10), where nvidia-smi is installed (else 127).
GPU = ("command -v nvidia-smi >/dev/null 2>&1 || exit 127; nvidia-smi "
       "--query-gpu=index,temperature.gpu,power.draw --format=csv,noheader,nounits")


#: lldpd's neighbours, as the user (group _lldpd) or through `sudo -n` (else 127 / non-zero).
LLDP = ("command -v lldpcli >/dev/null 2>&1 || exit 127; "
        "lldpcli -f json show neighbors 2>/dev/null || sudo -n lldpcli -f json show neighbors")


def spark_script(netdevs: Sequence[str]) -> str:
    """The one batch a cycle runs on a Spark: the counters probe's jobs (`ip -s -s -j link`,
    RDMA hw_counters, `ethtool -S` per twin), the GPU's sensors, lldpd's neighbours and the
    twins' sysfs state."""
    names = " ".join(shlex.quote(n) for n in netdevs)
    jobs = [*spark_jobs(netdevs), GPU, LLDP,
            _SYSFS.format(names=names, fields=" ".join(_SYSFS_FIELDS))]
    return 'export PATH="$PATH:/usr/sbin:/sbin"\n' + batch_script(jobs, tmp="fabric-watch")


def _int(text: str) -> int | None:
    return int(text) if text.lstrip("-").isdigit() and text != "-" else None


def parse_sysfs(text: str) -> dict[str, LinkState]:
    """The sysfs job's lines as LinkStates by netdev (a speed below 0 is "unknown")."""
    out: dict[str, LinkState] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 1 + len(_SYSFS_FIELDS):
            continue
        name, mtu, speed, carrier, up, down = parts
        spd = _int(speed)
        out[name] = LinkState(_int(mtu), spd if spd is not None and spd > 0 else None,
                              carrier == "1", _int(up), _int(down))
    return out


def read_spark(connection: Any, host: str, twins: Sequence[TwinLabels],
               timeout: float) -> SparkReading:
    """A Spark's reading from one batch on an exec channel of its open session."""
    netdevs = [t.twin for t in twins]
    taken = now()
    _, out = exec_script(connection, spark_script(netdevs), timeout)
    jobs = require_all(split_batch(out, len(netdevs) + 5))
    counters = spark_snapshot(host, taken, [(t.twin, t.rdma or None) for t in twins], jobs[:-3])
    gpus = parse_gpus(jobs[-3].text) if jobs[-3].exit_code == 0 else {}
    return SparkReading(host, parse_sysfs(jobs[-1].text), counters, gpus,
                        parse_lldp(jobs[-2].text) if jobs[-2].exit_code == 0 else None)


def parse_lldp(text: str) -> tuple[LldpNeighbor, ...] | None:
    """lldpd's neighbours (None when its output does not parse: not judged this cycle)."""
    try:
        return tuple(r for r in parse("lldpcli", text) if isinstance(r, LldpNeighbor))
    except ParseError:
        return None


def parse_gpus(text: str) -> dict[str, tuple[float | None, float | None]]:
    """nvidia-smi's `index, temperature, power` lines: index -> (°C, W); `[N/A]` is None
    (a GB10 may not report its power draw)."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            out[parts[0]] = (_float(parts[1]), _float(parts[2]))
    return out


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _rows(rows: Any) -> list[Row]:
    return [{str(k): (v.decode() if isinstance(v, bytes) else v) for k, v in dict(r).items()}
            for r in rows]


def read_switch(api: Any, host: str, lanes: Sequence[str]) -> SwitchReading:
    """The switch's reading: `/interface print stats`, `/interface/ethernet print stats`,
    `/ip/neighbor print`, `monitor once` of the cabled `lanes` and `/system/health`, sent at
    once (one round trip)."""
    ethernet = api.get_resource("/interface/ethernet")
    pending = {
        "interface": api.get_resource("/interface").call_async("print", {"stats": ""}),
        "ethernet": ethernet.call_async("print", {"stats": ""}),
        "neighbors": api.get_resource("/ip/neighbor").get_async(),
        "health": api.get_resource("/system/health").get_async(),
    }
    if lanes:  # one `!re` per lane, each naming its lane
        pending["monitor"] = ethernet.call_async("monitor", {"numbers": ",".join(lanes),
                                                             "once": ""})
    got: Mapping[str, list[Row]] = {k: _rows(p.get()) for k, p in pending.items()}
    by_name = {k: {str(r.get("name", "")): r for r in got[k]} for k in ("interface", "ethernet")}
    return SwitchReading(host, by_name["interface"], by_name["ethernet"], list(got["neighbors"]),
                         {str(r.get("name", "")): r for r in got.get("monitor", [])},
                         list(got["health"]))
