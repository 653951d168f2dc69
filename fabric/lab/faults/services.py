"""Faults of a host's daemons: `sshd-stop` (HOST) and `time` (a Spark whose chronyd follows a
time server that is not there)."""

from __future__ import annotations

from fabric.lab import ns
from fabric.lab.faults.records import Fault, SshdStopUndo, TimeUndo
from fabric.lab.faults.targets import Ctx, lab_spark
from fabric.lab.host import sshd, timesync
from fabric.lab.lifecycle import mgmt, registry


def sshd_stop(ctx: Ctx, target: str) -> Fault:
    ctx.netns(target)
    pid = ctx.info.hosts[target].pids.get("sshd")
    if pid is None or not ns.alive(pid):
        raise ns.LabError(f"sshd on {target} is not running")
    ns.kill_all([pid])
    return Fault("sshd-stop", target, f"sshd on {target} ({ctx.info.mgmt[target]}) stopped",
                 SshdStopUndo(host=target))


def undo_sshd_stop(ctx: Ctx, u: SshdStopUndo) -> None:
    host = u.host
    h = ctx.info.hosts[host]
    pid = sshd.start(h.pids["holder"], host, ctx.info.dir / "hosts" / host / "sshd_config",
                     ctx.info.dir / "logs" / f"{host}.sshd.log", h.mgmt_ip)
    registry.set_pid(ctx.info.name, host, "sshd", pid)


def time(ctx: Ctx, target: str) -> Fault:
    """A Spark whose chronyd follows a time server that is not there (a wrong NTP address):
    it never synchronises, and `time.offset` must fail for that Spark only."""
    lab_spark(ctx, target, "time")
    dead = str(mgmt.address(ctx.info.slot, timesync.DEAD_HOST).ip)
    restart_chronyd(ctx, target, dead, wait=False)
    return Fault("time", target, f"chronyd on {target} follows {dead}, where no time server "
                 "answers", TimeUndo(host=target))


def undo_time(ctx: Ctx, u: TimeUndo) -> None:
    restart_chronyd(ctx, u.host, timesync.server_address(ctx.info.slot), wait=True)


def restart_chronyd(ctx: Ctx, host: str, server: str, wait: bool) -> None:
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
