"""Nornir task: after a push, check a Spark's twins (link, MTU, address) and ping a peer."""

from __future__ import annotations

import json
import re
import time

from nornir.core.task import Result, Task

from fabric.devices.spark.model import NetdevWant
from fabric.devices.spark.render import spark_wants
from fabric.intent.model import Intent
from fabric.intent.wire import IP_ICMP_HEADERS
from fabric.remote.shell import sh, sh_ok

_RECEIVED = re.compile(r"(\d+) (?:packets )?received")


def verify_spark_push(task: Task, wants: tuple[NetdevWant, ...], ping_peers: bool = True,
                      attempts: int = 3) -> Result:
    """Each twin up with carrier, at its MTU, holding its address; a DF ping to its peer.

    Result is the list of problems (empty: verified); `failed` is set when there are any.
    """
    problems: list[str] = []
    links = {x["ifname"]: x for x in json.loads(sh_ok(task, "ip -j addr show") or "[]")}
    for w in wants:
        link = links.get(w.netdev)
        if link is None:
            problems.append(f"{w.netdev}: missing")
            continue
        flags = link.get("flags", [])
        link_up = "UP" in flags and "LOWER_UP" in flags
        if not link_up:
            problems.append(f"{w.netdev}: link not up ({link.get('operstate')})")
        if link.get("mtu") != w.mtu:
            problems.append(f"{w.netdev}: mtu {link.get('mtu')}, want {w.mtu}")
        have = {f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                if a.get("family") == "inet"}
        missing = sorted(set(w.addresses) - have)
        if missing:
            problems.append(f"{w.netdev}: missing address {', '.join(missing)}")
        if ping_peers and w.peer_address and link_up:
            err = _ping(task, w, attempts)
            if err:
                problems.append(err)
    return Result(host=task.host, result=problems, changed=False, failed=bool(problems))


def _ping(task: Task, w: NetdevWant, attempts: int) -> str | None:
    size = w.mtu - IP_ICMP_HEADERS
    cmd = f"ping -c 2 -i 0.2 -W 1 -M do -s {size} -I {w.netdev} {w.peer_address}"
    out = ""
    for n in range(attempts):
        rc, out = sh(task, cmd)
        m = _RECEIVED.search(out)
        if rc == 0 and m and int(m.group(1)) > 0:
            return None
        if n + 1 < attempts:
            time.sleep(0.5)
    last = out.strip().splitlines()[-1] if out.strip() else "no output"
    return (f"{w.netdev}: no reply from {w.peer_address} ({w.link_id}) with a "
            f"{size}-byte DF ping: {last}")


def pingable(intent: Intent, host: str, in_run: frozenset[str] | set[str]
             ) -> tuple[NetdevWant, ...]:
    """Wants of `host`; a peer outside this run is not pinged (it may not be configured)."""
    owner = {str(i.address.ip): i.host for i in intent.interfaces()}
    out = []
    for w in spark_wants(intent, host):
        if w.peer_address and owner.get(w.peer_address) not in in_run:
            w = NetdevWant(w.netdev, w.mtu, w.addresses, w.link_id, None)
        out.append(w)
    return tuple(out)
