"""Nornir task: make a Spark's fabric twins match its push changeset (files + runtime)."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.devices.spark.model import SparkChanges
from fabric.devices.spark.netplan import NM_CONNECTIONS
from fabric.devices.spark.platform import LOGIND_PATH
from fabric.remote.shell import RemoteCommandFailed, remove_command, sh_steps, write_command

#: Regenerate from every netplan file and apply it (NetworkManager or networkd alike).
NETPLAN_APPLY = "netplan generate && netplan apply"
#: Make NetworkManager forget a profile file push removed (where NetworkManager runs).
NM_RELOAD = "if command -v nmcli >/dev/null 2>&1; then nmcli connection reload; fi"
#: Make logind read its changed drop-in, where systemd is init and its manager answers on the
#: bus (a host without it, the lab's namespaces, reads the file when logind starts; a lab host
#: may still see the machine's /run/systemd/system without reaching its bus).
LOGIND_RESTART = ("if [ -d /run/systemd/system ] && systemctl show-environment >/dev/null 2>&1;"
                  " then systemctl try-restart systemd-logind; fi")


def apply_spark_config(task: Task, changeset: SparkChanges, has_netplan: bool) -> Result:
    """Write the changed managed files (netplan, sysctl.d) and apply the planned runtime
    changes, in ONE command that stops at the first failure.

    Runtime: `netplan apply` where netplan exists, else the changeset's `ip` commands (the lab);
    `sysctl` and `mlnx_qos` commands either way. Dry run: report the changeset, change nothing.
    """
    diff = change_text(changeset)
    if task.is_dry_run() or changeset.changes == 0:
        return Result(host=task.host, result=diff, changed=changeset.changes > 0, diff=diff)
    labels, steps = apply_steps(changeset, has_netplan)
    ran = sh_steps(task, steps, stop_on_error=True, timeout=180, root=True)
    for label, (rc, out) in zip(labels, ran, strict=False):
        if rc != 0:
            raise RemoteCommandFailed(f"{task.host.name}: apply: `{label}` exited {rc}: "
                                      f"{out[-500:]}")
    if len(ran) != len(steps):
        raise RemoteCommandFailed(f"{task.host.name}: apply: only {len(ran)} of {len(steps)} "
                                  "steps reported back")
    return Result(host=task.host, result=diff, changed=True, diff=diff)


def apply_steps(changeset: SparkChanges, has_netplan: bool) -> tuple[list[str], list[str]]:
    """(what each step does, the shell step), in order: changed files (written, or removed
    where a foreign definition is taken over), then the runtime (`netplan apply`, or the `ip`
    commands without netplan), then `sysctl`/`mlnx_qos`. The batch runs as root."""
    labels = [f"write {f.path}" if f.new is not None else f"remove {f.path}"
              for f in changeset.changed_files]
    steps = [write_command(f.path, f.new, f.mode) if f.new is not None
             else remove_command(f.path) for f in changeset.changed_files]
    if any(f.path.startswith(NM_CONNECTIONS + "/") for f in changeset.changed_files):
        labels.append("nmcli connection reload")
        steps.append(NM_RELOAD)
    if any(f.path == LOGIND_PATH for f in changeset.changed_files):
        labels.append("restart systemd-logind")
        steps.append(LOGIND_RESTART)
    ip_cmds = [c for c in changeset.commands if c.startswith("ip ")]
    runtime = ip_cmds
    if has_netplan:
        runtime = [NETPLAN_APPLY] if runs_netplan_apply(changeset) else []
    runtime += [c for c in changeset.commands if not c.startswith("ip ")]
    return labels + runtime, steps + runtime


def runs_netplan_apply(changeset: SparkChanges) -> bool:
    """Whether applying `changeset` on a host with netplan runs `netplan apply` (a netplan
    file or a twin's runtime state changes). On a NetworkManager host that flushes every twin
    netplan names and NetworkManager configures them again later, once each has carrier."""
    return (any(f.path.startswith("/etc/netplan/") for f in changeset.changed_files)
            or any(c.startswith("ip ") for c in changeset.commands))


def change_text(changeset: SparkChanges) -> str:
    """The changeset as a reviewer reads it: each file's unified diff, then the commands. Where
    netplan applies the twins' state, the `ip` lines say what `netplan apply` will change."""
    lines = [f.diff.rstrip("\n") for f in changeset.changed_files]
    ip_cmds = [c for c in changeset.commands if c.startswith("ip ")]
    if changeset.netplan and (ip_cmds or any(f.path.startswith("/etc/netplan/")
                                        for f in changeset.changed_files)):
        lines.append(f"$ {NETPLAN_APPLY}" + ("   # which makes these changes:" if ip_cmds
                                             else ""))
        lines += [f"#   {c}" for c in ip_cmds]
        lines += [f"$ {c}" for c in changeset.commands if not c.startswith("ip ")]
    else:
        lines += [f"$ {c}" for c in changeset.commands]
    return "\n".join(lines)


def tos_devices(changeset: SparkChanges) -> set[str]:
    """RDMA devices whose RDMA CM ToS the changeset sets (rollback puts theirs back)."""
    return {c.split()[2] for c in changeset.commands if c.startswith("cma_roce_tos -d ")}
