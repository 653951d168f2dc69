"""Faults injected into a lab, recorded in `faults.json` so `heal` undoes them newest first.

Each fault changes what the "hardware" reports (ip link, ethtool, lldpcli, the RouterOS API,
the kernel counters), the way a bad cable, a mis-set switch port or a mis-configured host would.

Two faults act over time rather than once:

- `flap TARGET` (a lane, `host:port` or link id): the cable bounces for as long as the fault
  lasts. A flapper process in the namespace of the cable's Spark end takes that end (the hidden
  veth `cx7-pN`) down for `FLAP_DOWN_S` every `FLAP_PERIOD_S`, so both ends lose carrier: the
  twins count carrier_changes, the lane counts link-downs and reads running=no while it stays
  enabled, as with a failing DAC. The flapper lives in a lab namespace, so `fabric lab down`
  kills it with the lab; `heal` stops it and leaves the cable up.
- `drop TARGET[@rx|@tx|@both][,PCT%]`: the cable loses a share of its frames (default
  `DROP_PERCENT`, both directions; `rx`/`tx` as seen from the end TARGET names: the lane for a
  bare lane, `host` for `host:port`, the first end of a link id). The kernel has
  no netem, gact or police, so a classic-BPF program (`tc ... bpf bytecode ... da`: a random
  number against a threshold, TC_ACT_SHOT) drops them where the sending end queues them:
  - a Spark end sends: on `clsact` egress of its hidden cable end, so the twin's transmit
    fails and the kernel counts it in the twin's `tx_dropped` (`ip -s link`: counters.drops
    "kernel drops");
  - a switch lane sends: in a root `htb` of the lane, so the root qdisc counts it and the
    emulator prints it as the lane's `tx-queue-drop` (counters.drops "interface drops").
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.intent.model import Endpoint, Intent, Link
from fabric.lab import cabling, labfiles, mgmt, names, ns, registry, sshd, timesync
from fabric.lab.registry import LabInfo

DEGRADED_MBIT = 1000
WRONG_HOST = 200
#: A flapping cable is down this long ...
FLAP_DOWN_S = 0.3
#: ... once in every period (a validate window of a few seconds sees several bounces).
FLAP_PERIOD_S = 2.0
#: Share of frames a `drop` fault loses per direction unless TARGET says otherwise.
DROP_PERCENT = 5.0
#: Marker of the flapper's command line (heal kills a recorded pid only if it still is one).
FLAPPER = "fabric.lab.faults"


@dataclass(frozen=True)
class Fault:
    """One injected fault: what, where, what it did, and the data to undo it."""

    kind: str
    target: str
    summary: str
    undo: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Ctx:
    info: LabInfo
    intent: Intent

    def netns(self, host: str) -> str:
        if host not in self.info.namespaces:
            raise InputError(f"{host} is not a host of lab {self.info.name} "
                             f"({', '.join(sorted(self.info.namespaces))})")
        return self.info.namespaces[host]

    def holder(self, host: str) -> int:
        return self.info.hosts[host].pids["holder"]


def _path(lab: str) -> Path:
    return registry.lab_dir(lab) / "faults.json"


def active_faults(lab: str) -> list[Fault]:
    """The faults injected into `lab` and not healed yet, oldest first."""
    try:
        data = json.loads(_path(lab).read_text())
    except (OSError, ValueError):
        return []
    return [Fault(**f) for f in data]


def _save(lab: str, faults: list[Fault]) -> None:
    labfiles.write_json(_path(lab), [asdict(f) for f in faults])


# --- targets -------------------------------------------------------------------------------

def _link(ctx: _Ctx, target: str) -> tuple[Link, str]:
    """A link id, `host:port` or a bare switch lane -> (link, the host whose end was named)."""
    if "--" in target:
        try:
            link = ctx.intent.link(target)
        except KeyError:
            raise InputError(f"no link {target!r} in lab {ctx.info.name}; links: "
                             f"{', '.join(lk.id for lk in ctx.intent.links)}") from None
        return link, link.a.host
    host, _, port = target.rpartition(":")
    if not host and ctx.info.switch:
        host = ctx.info.switch
    ctx.netns(host)
    found = cabling.link_by_end(ctx.intent, host, port)
    if found is None:
        raise InputError(f"{host}:{port} has no cable in lab {ctx.info.name}")
    return found, host


def _lane(ctx: _Ctx, target: str) -> str:
    if ctx.info.switch is None:
        raise InputError(f"lab {ctx.info.name} has no switch ({ctx.info.topology})")
    link, _ = _link(ctx, target)
    return link.end_of(ctx.info.switch).port


def _end(ctx: _Ctx, host: str, port: str) -> cabling.CableEnd:
    return cabling.cable_end(ctx.intent, Endpoint(host, port))


def _host_netdev(ctx: _Ctx, target: str) -> tuple[str, str]:
    host, sep, netdev = target.partition(":")
    if not sep or not netdev:
        raise InputError(f"expected HOST:NETDEV (e.g. spark01:enp1s0f0np0), got {target!r}")
    ctx.netns(host)
    return host, netdev


# --- kernel helpers --------------------------------------------------------------------------

def _link_info(netns: str, dev: str) -> dict[str, Any]:
    data = json.loads(ns.run(["ip", "-n", netns, "-j", "-d", "link", "show", "dev", dev]))
    info: dict[str, Any] = data[0]
    return info


def _ipv4(netns: str, dev: str) -> list[str]:
    data = json.loads(ns.run(["ip", "-n", netns, "-j", "-4", "addr", "show", "dev", dev]))
    return [f"{a['local']}/{a['prefixlen']}" for d in data for a in d.get("addr_info", [])]


def _root_tbf(netns: str, dev: str) -> dict[str, Any] | None:
    data = json.loads(ns.run(["ip", "netns", "exec", netns, "tc", "-j", "qdisc", "show",
                              "dev", dev]) or "[]")
    for q in data:
        if q.get("kind") == "tbf" and q.get("root"):
            opts = q.get("options", {})
            return {"rate": int(opts.get("rate", 0)), "burst": int(opts.get("burst", 0))}
    return None


def _set_tbf(netns: str, dev: str, tbf: dict[str, Any] | None) -> None:
    tc = ["ip", "netns", "exec", netns, "tc", "qdisc"]
    if tbf is None:
        if _root_tbf(netns, dev) is not None:
            ns.run([*tc, "del", "dev", dev, "root"])
        return
    ns.run([*tc, "replace", "dev", dev, "root", "tbf", "rate", f"{tbf['rate'] * 8}bit",
            "burst", str(max(int(tbf["burst"]), 1 << 20)), "latency", "50ms"])


# --- the faults ------------------------------------------------------------------------------

def _mtu(ctx: _Ctx, target: str) -> Fault:
    lane = _lane(ctx, target)
    assert ctx.info.switch is not None
    netns = ctx.netns(ctx.info.switch)
    before = int(_link_info(netns, lane)["mtu"])
    if before <= 1500:
        raise ns.LabError(f"{lane} already has MTU {before}: configure the switch first "
                          f"(fabric push --lab {ctx.info.name} --apply)")
    ns.run(["ip", "-n", netns, "link", "set", "dev", lane, "mtu", "1500"])
    return Fault("mtu", target, f"{ctx.info.switch} {lane} kernel MTU {before} -> 1500",
                 {"host": ctx.info.switch, "dev": lane, "mtu": before})


def _undo_mtu(ctx: _Ctx, u: dict[str, Any]) -> None:
    ns.run(["ip", "-n", ctx.netns(u["host"]), "link", "set", "dev", u["dev"], "mtu",
            str(u["mtu"])])


def _link_down(ctx: _Ctx, target: str) -> Fault:
    link, host = _link(ctx, target)
    end = _end(ctx, host, link.end_of(host).port)
    ns.run(["ip", "-n", ctx.netns(host), "link", "set", "dev", end.netdev, "down"])
    return Fault("link-down", target, f"cable {link.id} down at {host} ({end.netdev})",
                 {"host": host, "dev": end.netdev})


def _undo_link_down(ctx: _Ctx, u: dict[str, Any]) -> None:
    ns.run(["ip", "-n", ctx.netns(u["host"]), "link", "set", "dev", u["dev"], "up"])


def _degrade(ctx: _Ctx, target: str) -> Fault:
    link, _ = _link(ctx, target)
    ends = [_end(ctx, ep.host, ep.port) for ep in link.ends()]
    before = {f"{e.host}:{e.netdev}": _root_tbf(ctx.netns(e.host), e.netdev) for e in ends}
    rate = {"rate": DEGRADED_MBIT * 1_000_000 // 8, "burst": 1 << 20}
    for e in ends:
        _set_tbf(ctx.netns(e.host), e.netdev, rate)
    return Fault("degrade", target, f"cable {link.id} shaped to {DEGRADED_MBIT} Mbit/s both ways",
                 {"before": before})


def _undo_degrade(ctx: _Ctx, u: dict[str, Any]) -> None:
    for key, tbf in u["before"].items():
        host, dev = key.split(":", 1)
        _set_tbf(ctx.netns(host), dev, tbf)


def _swap(ctx: _Ctx, target: str) -> Fault:
    parts = [p.strip() for p in target.split(",")]
    if len(parts) != 2:
        raise InputError(f"swap takes two cable ends A,B (e.g. crs804:qsfp56-dd-1-1,"
                         f"crs804:qsfp56-dd-2-1), got {target!r}")
    (la, ha), (lb, hb) = _link(ctx, parts[0]), _link(ctx, parts[1])
    if la.id == lb.id:
        raise InputError(f"{parts[0]} and {parts[1]} are the two ends of one cable")
    if ctx.info.switch:
        sw = ctx.info.switch
        lanes = (la.end_of(sw).port, lb.end_of(sw).port)
        _swap_names(ctx.netns(sw), *lanes)
        undo: dict[str, Any] = {"rename": [sw, *lanes]}
        hosts = {sw, la.peer_of(sw).host, lb.peer_of(sw).host}
    else:
        a, b = la.end_of(ha), lb.end_of(hb)
        pa, pb = la.peer_of(ha), lb.peer_of(hb)
        _repair(ctx, [(a.host, a.port, pb.host, pb.port), (b.host, b.port, pa.host, pa.port)])
        undo = {"repair": [[a.host, a.port, pa.host, pa.port], [b.host, b.port, pb.host, pb.port]]}
        hosts = {a.host, b.host, pa.host, pb.host}
    return Fault("swap", target, f"cables {la.id} and {lb.id} re-paired", {**undo,
                 "hosts": sorted(hosts)})


def _undo_swap(ctx: _Ctx, u: dict[str, Any]) -> None:
    if "rename" in u:
        sw, a, b = u["rename"]
        _swap_names(ctx.netns(sw), a, b)
    else:
        _repair(ctx, [tuple(x) for x in u["repair"]])


def _swap_names(netns: str, a: str, b: str) -> None:
    """Exchange two netdevs' names (the cables move, each name keeps its MTU and bridge): both
    lanes down, the cables moved, both up, as a person re-plugs two DACs. Nothing restarts and
    no LLDP table is touched: both ends keep the neighbour learned before the move until its
    TTL, as in the field."""
    ia, ib = _link_info(netns, a), _link_info(netns, b)
    tmp = "fl-swap-tmp"
    lines = [f"link set {a} down", f"link set {b} down", f"link set {a} name {tmp}",
             f"link set {b} name {a}", f"link set {tmp} name {b}"]
    for name, info in ((a, ia), (b, ib)):
        lines.append(f"link set {name} mtu {info['mtu']}")
        master = info.get("master")
        lines.append(f"link set {name} master {master}" if master else f"link set {name} nomaster")
        if "UP" in info.get("flags", []):
            lines.append(f"link set {name} up")
    ns.ip_batch(lines, netns)


def _repair(ctx: _Ctx, pairs: list[tuple[str, ...]]) -> None:
    """Re-lay Spark-to-Spark cables: each (host, port, host, port) becomes one new veth.

    The twins are re-created on the new (silent) cable end with their MAC, MTU, state,
    addresses and ARP sysctls, as a re-plugged cable leaves a Spark's settings alone.
    """
    ports = {(h, p) for q in pairs for h, p in ((q[0], q[1]), (q[2], q[3]))}
    saved = {hp: _save_twins(ctx, *hp) for hp in ports}
    for host, port in ports:
        ns.run(["ip", "-n", ctx.netns(host), "link", "del", "dev", names.lower(port)],
               check=False)
    root = [cabling.veth_line(ctx.info.name, ctx.intent, _end(ctx, ha, pa), _end(ctx, hb, pb))
            for ha, pa, hb, pb in pairs]
    ns.ip_batch(root)
    for (host, port), twins in saved.items():
        lower, netns = names.lower(port), ctx.netns(host)
        ns.ip_batch([f"link add link {lower} name {t['name']} address {t['mac']} mtu {t['mtu']}"
                     " type macvlan mode private" for t in twins], netns)
        ns.sysctl(netns, {**cabling.hidden_end_sysctls([lower]),
                          **{k: v for t in twins for k, v in t["sysctls"].items()}})
        lines = [f"link set {lower} up"]
        for t in twins:
            lines += [f"addr add {a} dev {t['name']}" for a in t["addrs"]]
            if t["up"]:
                lines.append(f"link set {t['name']} up")
        ns.ip_batch(lines, netns)


#: Per-twin sysctls that survive a re-laid cable (push sets them against ARP flux).
TWIN_SYSCTLS = ("net.ipv4.conf.{dev}.arp_ignore", "net.ipv4.conf.{dev}.arp_announce")


def _save_twins(ctx: _Ctx, host: str, port: str) -> list[dict[str, Any]]:
    netns = ctx.netns(host)
    twins = [t.netdev for t in ctx.intent.hosts[host].ports[port]]
    values = ns.read_sysctls(netns, [k.format(dev=t) for t in twins for k in TWIN_SYSCTLS])
    out = []
    for twin in twins:
        info = _link_info(netns, twin)
        keys = [k.format(dev=twin) for k in TWIN_SYSCTLS]
        out.append({"name": twin, "mac": info["address"], "mtu": info["mtu"],
                    "up": "UP" in info.get("flags", []), "addrs": _ipv4(netns, twin),
                    "sysctls": {k: values[k] for k in keys if k in values}})
    return out


def _autoneg(ctx: _Ctx, target: str) -> Fault:
    lane = _lane(ctx, target)
    api = _api(ctx)
    try:
        res = api.get_api().get_resource("/interface/ethernet")
        rows = res.get(name=lane)
        if not rows:
            raise ns.LabError(f"the switch API does not list {lane}")
        row = rows[0]
        if str(row.get("auto-negotiation")) in ("true", "yes"):
            raise ns.LabError(f"{lane} already auto-negotiates (a fresh switch); configure it "
                              "first (fabric push --lab ... --apply)")
        res.set(id=row["id"], **{"auto-negotiation": "yes"})
        _trained(res, lane)
    finally:
        api.disconnect()
    return Fault("autoneg", target, f"{lane} auto-negotiation=yes (was speed={row.get('speed')})",
                 {"lane": lane, "speed": str(row.get("speed", ""))})


def _undo_autoneg(ctx: _Ctx, u: dict[str, Any]) -> None:
    api = _api(ctx)
    try:
        res = api.get_api().get_resource("/interface/ethernet")
        row = res.get(name=u["lane"])[0]
        values = {"auto-negotiation": "no"}
        if u["speed"]:
            values["speed"] = u["speed"]
        res.set(id=row["id"], **values)
        _trained(res, u["lane"])
    finally:
        api.disconnect()


#: The longest a lane may train before a fault (or its heal) is given up on.
TRAINING_CEILING_S = 60.0


def _trained(res: Any, lane: str) -> None:
    """Wait until `lane` is `link-ok` again after a change of its link settings (the switch
    holds it at no-link while the PHY trains), so what follows sees the fault, not training."""
    def ok() -> bool:
        rows = res.call("monitor", {"numbers": lane, "once": ""})
        return bool(rows) and str(dict(rows[0]).get("status")) == "link-ok"

    ns.wait_until(f"{lane}: link-ok after training", ok, timeout=TRAINING_CEILING_S)


def _api(ctx: _Ctx) -> Any:
    import routeros_api

    assert ctx.info.switch is not None
    return routeros_api.RouterOsApiPool(ctx.info.mgmt[ctx.info.switch],
                                        username=ctx.info.routeros_user,
                                        password=ctx.info.routeros_password,
                                        port=ctx.info.api_port, plaintext_login=True)


def _configured(ctx: _Ctx, target: str) -> tuple[str, str, ipaddress.IPv4Interface]:
    host, netdev = _host_netdev(ctx, target)
    addrs = _ipv4(ctx.netns(host), netdev)
    if not addrs:
        raise ns.LabError(f"{host}:{netdev} has no IPv4 address: configure the lab first "
                          f"(fabric push --lab {ctx.info.name} --apply)")
    return host, netdev, ipaddress.IPv4Interface(addrs[0])


def _wrong_addr(ctx: _Ctx, target: str) -> Fault:
    host, netdev, addr = _configured(ctx, target)
    net = addr.network
    wrong_host = WRONG_HOST if int(addr.ip) - int(net.network_address) != WRONG_HOST else 201
    wrong = ipaddress.IPv4Interface((int(net.network_address) + wrong_host, net.prefixlen))
    ns.ip_batch([f"addr del {addr} dev {netdev}", f"addr add {wrong} dev {netdev}"],
                ctx.netns(host))
    return Fault("wrong-addr", target, f"{host}:{netdev} {addr} -> {wrong}",
                 {"host": host, "dev": netdev, "good": str(addr), "wrong": str(wrong)})


def _undo_wrong_addr(ctx: _Ctx, u: dict[str, Any]) -> None:
    ns.ip_batch([f"addr del {u['wrong']} dev {u['dev']}", f"addr add {u['good']} dev {u['dev']}"],
                ctx.netns(u["host"]))


def _default_route(ctx: _Ctx, target: str) -> Fault:
    host, netdev, addr = _configured(ctx, target)
    netns = ctx.netns(host)
    old = json.loads(ns.run(["ip", "-n", netns, "-j", "-4", "route", "show", "default"]) or "[]")
    gw = ipaddress.IPv4Address(int(addr.network.broadcast_address) - 1)
    if gw == addr.ip:
        gw = gw - 1
    ns.run(["ip", "-n", netns, "route", "replace", "default", "via", str(gw), "dev", netdev])
    previous = [{"gateway": r.get("gateway"), "dev": r.get("dev")} for r in old]
    return Fault("default-route", target, f"{host}: default via {gw} dev {netdev}",
                 {"host": host, "previous": previous})


def _undo_default_route(ctx: _Ctx, u: dict[str, Any]) -> None:
    netns = ctx.netns(u["host"])
    ns.run(["ip", "-n", netns, "route", "del", "default"], check=False)
    for r in u["previous"]:
        via = ["via", r["gateway"]] if r.get("gateway") else []
        ns.run(["ip", "-n", netns, "route", "add", "default", *via, "dev", r["dev"]])


def _sshd_stop(ctx: _Ctx, target: str) -> Fault:
    ctx.netns(target)
    pid = ctx.info.hosts[target].pids.get("sshd")
    if pid is None or not ns.alive(pid):
        raise ns.LabError(f"sshd on {target} is not running")
    ns.kill_all([pid])
    return Fault("sshd-stop", target, f"sshd on {target} ({ctx.info.mgmt[target]}) stopped",
                 {"host": target})


def _undo_sshd_stop(ctx: _Ctx, u: dict[str, Any]) -> None:
    host = u["host"]
    h = ctx.info.hosts[host]
    pid = sshd.start(h.pids["holder"], host, ctx.info.dir / "hosts" / host / "sshd_config",
                     ctx.info.dir / "logs" / f"{host}.sshd.log", h.mgmt_ip)
    registry.set_pid(ctx.info.name, host, "sshd", pid)


def _time(ctx: _Ctx, target: str) -> Fault:
    """A Spark whose chronyd follows a time server that is not there (a wrong NTP address):
    it never synchronises, and `time.offset` must fail for that Spark only."""
    if ctx.intent.hosts.get(target) is None or ctx.intent.hosts[target].role != "spark":
        raise InputError(f"time: {target} is not a Spark of lab {ctx.info.name}")
    dead = str(mgmt.address(ctx.info.slot, timesync.DEAD_HOST).ip)
    _restart_chronyd(ctx, target, dead, wait=False)
    return Fault("time", target, f"chronyd on {target} follows {dead}, where no time server "
                 "answers", {"host": target})


def _undo_time(ctx: _Ctx, u: dict[str, Any]) -> None:
    _restart_chronyd(ctx, u["host"], timesync.server_address(ctx.info.slot), wait=True)


def _restart_chronyd(ctx: _Ctx, host: str, server: str, wait: bool) -> None:
    chrony = timesync.binaries()
    if chrony is None:
        raise ns.LabError("chrony is not unpacked (run `make lab-tools`)")
    h = ctx.info.hosts[host]
    old = h.pids.get("chronyd")
    if old is not None and ns.alive(old):
        ns.kill_all([old])
    pid = timesync.start_client(h.pids["holder"], host, ctx.info.dir / "hosts" / host,
                                ctx.info.dir / "logs" / f"{host}.chronyd.log", server, chrony)
    registry.set_pid(ctx.info.name, host, "chronyd", pid)
    if wait:
        ns.wait_until(f"{host}: chronyd synchronised to {server}",
                      lambda: timesync.synchronised(h.pids["holder"], chrony), timeout=20)


def _bounced_end(ctx: _Ctx, link: Link, named: str) -> cabling.CableEnd:
    """The end a flap bounces: the Spark end of a switch cable (the lane stays enabled), else
    the named end."""
    sw = ctx.info.switch
    ep = link.peer_of(sw) if sw is not None and sw in (link.a.host, link.b.host) else \
        link.end_of(named)
    return _end(ctx, ep.host, ep.port)


def _flap(ctx: _Ctx, target: str) -> Fault:
    link, named = _link(ctx, target)
    end = _bounced_end(ctx, link, named)
    netns = ctx.netns(end.host)
    if any(f.kind == "flap" and f.undo.get("dev") == end.netdev and f.undo.get("host") == end.host
           for f in active_faults(ctx.info.name)):
        raise ns.LabError(f"cable {link.id} already flaps; `fabric lab heal` first")
    if "UP" not in _link_info(netns, end.netdev).get("flags", []):
        raise ns.LabError(f"{end.host} {end.netdev} is down (a link-down fault?): a flap "
                          "bounces a cable that is up; `fabric lab heal` first")
    log = ctx.info.dir / "logs" / f"{end.host}.flap-{end.netdev}.log"
    log.unlink(missing_ok=True)
    argv = [sys.executable, "-m", FLAPPER, "flapper", "--dev", end.netdev,
            "--down-s", str(FLAP_DOWN_S), "--period-s", str(FLAP_PERIOD_S)]
    pid = ns.spawn(ns.in_ns(netns, argv), log)
    ns.wait_until(f"flapper of {end.netdev} on {end.host}",
                  lambda: log.exists() and "down #1" in log.read_text(errors="replace"),
                  timeout=20.0, failed=lambda: ns.exited_with(pid, log))
    return Fault("flap", target, f"cable {link.id} bounces at {end.host} ({end.netdev}): down "
                 f"{FLAP_DOWN_S:g} s every {FLAP_PERIOD_S:g} s (flapper pid {pid})",
                 {"host": end.host, "dev": end.netdev, "pid": pid})


def _is_flapper(pid: int, dev: str) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return FLAPPER.encode() in argv and dev.encode() in argv


def _undo_flap(ctx: _Ctx, u: dict[str, Any]) -> None:
    if _is_flapper(int(u["pid"]), u["dev"]):
        ns.kill_all([int(u["pid"])])
    ns.run(["ip", "-n", ctx.netns(u["host"]), "link", "set", "dev", u["dev"], "up"])


def flap_forever(dev: str, down_s: float, period_s: float) -> int:
    """Bounce `dev` (in this process's namespace) until SIGTERM; it is left up. Exit 1 when
    the netdev is gone (the lab went away underneath)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def ip_set(state: str) -> bool:
        proc = subprocess.run(["ip", "link", "set", "dev", dev, state], capture_output=True,
                              text=True, timeout=10, check=False)
        if proc.returncode != 0:
            print(f"ip link set {dev} {state}: {proc.stderr.strip()}", flush=True)
        return proc.returncode == 0

    bounces = 0
    try:
        while True:
            if not ip_set("down"):
                return 1
            bounces += 1
            print(f"{time.time():.3f} down #{bounces}", flush=True)
            time.sleep(down_s)
            if not ip_set("up"):
                return 1
            print(f"{time.time():.3f} up", flush=True)
            time.sleep(max(period_s - down_s, 0.0))
    finally:
        ip_set("up")


# --- drop ------------------------------------------------------------------------------------

DIRECTIONS = ("rx", "tx", "both")
#: TC_ACT_SHOT / TC_ACT_UNSPEC (-1: "no verdict", the frame goes on) for a direct-action filter.
TC_ACT_SHOT, TC_ACT_UNSPEC = 2, 0xFFFFFFFF
#: Classic BPF ancillary load of a random u32 (SKF_AD_OFF + SKF_AD_RANDOM).
SKF_AD_RANDOM = 0xFFFFF000 + 56
#: Filter priority of the drop filter on a Spark's clsact egress (its handle in heal).
DROP_PREF = 49


def drop_bytecode(percent: float) -> str:
    """`tc ... bpf bytecode` dropping `percent` % of frames at random: A = random u32;
    A >= threshold ? pass : drop."""
    threshold = min(max(round(percent / 100 * 2**32), 1), 2**32 - 1)
    program = [(0x20, 0, 0, SKF_AD_RANDOM),  # ld [rand]
               (0x35, 0, 1, threshold),  # jge #threshold, pass, drop
               (0x06, 0, 0, TC_ACT_UNSPEC),  # pass: ret #-1
               (0x06, 0, 0, TC_ACT_SHOT)]  # drop: ret #2
    return ",".join([str(len(program)), *(f"{c} {t} {f} {k}" for c, t, f, k in program)])


def _drop_spec(target: str) -> tuple[str, str, float]:
    """`TARGET[@rx|@tx|@both][,PCT%]` -> (target, direction, percent)."""
    spec, at, options = target.partition("@")
    direction, percent = "both", DROP_PERCENT
    for word in (w.strip() for w in options.split(",") if w.strip()) if at else ():
        if word in DIRECTIONS:
            direction = word
            continue
        try:
            percent = float(word.removesuffix("%"))
        except ValueError:
            raise InputError(f"drop takes TARGET[@rx|@tx|@both][,PCT%] (e.g. "
                             f"spark02:p0@tx,5%), got {target!r}") from None
        if not 0 < percent <= 100:
            raise InputError(f"drop share must be above 0 and at most 100 %, got {word!r}")
    return spec, direction, percent


def _qdiscs(netns: str, dev: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        ns.run(ns.in_ns(netns, ["tc", "-j", "qdisc", "show", "dev", dev])) or "[]")
    return data


def _drop_at_spark(netns: str, dev: str, bytecode: str) -> dict[str, Any]:
    """Drop on clsact egress of a Spark's hidden cable end: the twin's transmit fails."""
    tc = ns.in_ns(netns, ["tc"])
    have = any(q.get("kind") == "clsact" for q in _qdiscs(netns, dev))
    if have and ns.run([*tc, "filter", "show", "dev", dev, "egress", "pref", str(DROP_PREF)]):
        raise ns.LabError(f"{dev} already drops frames; `fabric lab heal` first")
    if not have:
        ns.run([*tc, "qdisc", "add", "dev", dev, "clsact"])
    ns.run([*tc, "filter", "add", "dev", dev, "egress", "pref", str(DROP_PREF), "bpf",
            "bytecode", bytecode, "da"])
    return {"at": "clsact", "added_qdisc": not have}


def _drop_at_lane(netns: str, dev: str, bytecode: str) -> dict[str, Any]:
    """Drop in a root htb of a switch lane (no classes: what passes is sent unshaped), so
    the root qdisc counts every drop (RouterOS tx-queue-drop)."""
    root = [q for q in _qdiscs(netns, dev) if q.get("root")]
    if root and root[0].get("kind") != "noqueue":
        raise ns.LabError(f"{dev} already has a {root[0].get('kind')} root qdisc (shaped by the "
                          "emulator, or another fault): heal or train the lane first")
    tc = ns.in_ns(netns, ["tc"])
    ns.run([*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb"])
    ns.run([*tc, "filter", "add", "dev", dev, "parent", "1:", "pref", str(DROP_PREF), "bpf",
            "bytecode", bytecode, "da"])
    return {"at": "root"}


def _drop(ctx: _Ctx, target: str) -> Fault:
    spec, direction, percent = _drop_spec(target)
    link, named = _link(ctx, spec)
    here, there = link.end_of(named), link.peer_of(named)
    senders: list[Endpoint] = {"tx": [here], "rx": [there], "both": [here, there]}[direction]
    bytecode = drop_bytecode(percent)
    undo: list[dict[str, Any]] = []
    done: list[str] = []
    try:
        for ep in senders:
            end = _end(ctx, ep.host, ep.port)
            netns = ctx.netns(end.host)
            if ctx.intent.hosts[end.host].role == "switch":
                how = _drop_at_lane(netns, end.netdev, bytecode)
            else:
                how = _drop_at_spark(netns, end.netdev, bytecode)
            undo.append({"host": end.host, "dev": end.netdev, **how})
            done.append(f"{end.host} {end.netdev} sends")
    except Exception:
        _undo_drop(ctx, {"ends": undo})
        raise
    return Fault("drop", target, f"cable {link.id} drops {percent:g} % of the frames "
                 f"{' and '.join(done)}", {"ends": undo})


def _undo_drop(ctx: _Ctx, u: dict[str, Any]) -> None:
    for e in reversed(u["ends"]):
        tc = ns.in_ns(ctx.netns(e["host"]), ["tc"])
        if e["at"] == "root":
            ns.run([*tc, "qdisc", "del", "dev", e["dev"], "root"], check=False)
        elif e.get("added_qdisc"):
            ns.run([*tc, "qdisc", "del", "dev", e["dev"], "clsact"], check=False)
        else:
            ns.run([*tc, "filter", "del", "dev", e["dev"], "egress", "pref", str(DROP_PREF)],
                   check=False)


Inject = Callable[[_Ctx, str], Fault]
Undo = Callable[[_Ctx, dict[str, Any]], None]
KINDS: dict[str, tuple[Inject, Undo]] = {
    "mtu": (_mtu, _undo_mtu),
    "link-down": (_link_down, _undo_link_down),
    "swap": (_swap, _undo_swap),
    "degrade": (_degrade, _undo_degrade),
    "autoneg": (_autoneg, _undo_autoneg),
    "wrong-addr": (_wrong_addr, _undo_wrong_addr),
    "default-route": (_default_route, _undo_default_route),
    "sshd-stop": (_sshd_stop, _undo_sshd_stop),
    "flap": (_flap, _undo_flap),
    "drop": (_drop, _undo_drop),
    "time": (_time, _undo_time),
}


def _context(lab: str) -> _Ctx:
    info = registry.load_lab(lab)
    return _Ctx(info, load_intent(info.topology_path, info.inventory_dir))


def inject(lab: str, kind: str, target: str) -> Fault:
    """Inject fault `kind` at `target` in lab `lab` and record it."""
    if kind not in KINDS:
        raise InputError(f"unknown fault {kind!r}; faults: {', '.join(KINDS)}")
    ctx = _context(lab)
    fault = KINDS[kind][0](ctx, target)
    _save(lab, [*active_faults(lab), fault])
    return fault


def heal(lab: str) -> list[Fault]:
    """Undo every recorded fault, newest first; the ones healed."""
    ctx = _context(lab)
    faults = active_faults(lab)
    healed: list[Fault] = []
    while faults:
        fault = faults[-1]
        ctx = _context(lab)  # pids may have changed (sshd, lldpd restarts)
        KINDS[fault.kind][1](ctx, fault.undo)
        faults.pop()
        _save(lab, faults)
        healed.append(fault)
    return healed


def main(argv: list[str] | None = None) -> int:
    """`python -m fabric.lab.faults flapper --dev DEV ...`: the process a `flap` fault runs."""
    parser = argparse.ArgumentParser(prog=f"python -m {FLAPPER}")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("flapper", help="bounce a netdev of this namespace until SIGTERM")
    p.add_argument("--dev", required=True)
    p.add_argument("--down-s", type=float, default=FLAP_DOWN_S)
    p.add_argument("--period-s", type=float, default=FLAP_PERIOD_S)
    args = parser.parse_args(argv)
    return flap_forever(args.dev, args.down_s, args.period_s)


if __name__ == "__main__":
    sys.exit(main())
