"""What `collect_spark_facts` runs on a Spark, as data: one row per command.

Every command runs inside one batched shell script (see `render_script`); each prints between
`@@@FABRIC <name>@@@` and `@@@FABRIC <name> rc=<rc>@@@`, stdout and stderr together.
Conventions the rows rely on:

- exit 127 means "not installed" (the shell's own code for a missing command; snippets that
  test for a tool themselves exit 127 too); the row's `tool` then lands in `SparkFacts.missing`;
- `ok_rc` lists exit codes whose output is still parsed (grep exits 2 on EINVAL GID slots);
- `empty_ok`: empty output means "nothing there" (no RDMA devices), not a parse error;
- fallbacks (sysfs GIDs, timedatectl) always run: they are cheap reads, and the builder takes
  the primary section when it parsed and the fallback otherwise;
- LLDP is read fresh (`lldp_command`): the Spark announces itself first (`lldpcli update`, so
  every neighbour hears it now), then waits, bounded, until each cabled twin with carrier
  lists a neighbour, then reads.

`GATE_COMMANDS`/`gate_commands` are the narrow set `fabric gate` re-reads live: links,
addresses, ethtool, LLDP and GIDs (see `fabric.fingerprint`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MARK = "@@@FABRIC"
END = "__end__"


@dataclass(frozen=True)
class SparkCommand:
    """One command of the batch. `kind` is a `fabric.parsers` kind, None for raw text."""

    name: str
    shell: str
    kind: str | None
    tool: str
    netdev: str | None = None
    ok_rc: tuple[int, ...] = (0,)
    empty_ok: bool = False


_SYSFS_GIDS = (
    "set -- /sys/class/infiniband/*/ports/*/gids/*; [ -e \"$1\" ] || exit 0; "
    "grep -H . /sys/class/infiniband/*/ports/*/gids/* "
    "/sys/class/infiniband/*/ports/*/gid_attrs/types/* "
    "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/*"
)
_NCCL = (
    "v=$(dpkg-query -W -f='${Version}' libnccl2 2>/dev/null) && [ -n \"$v\" ] "
    "&& { echo \"$v\"; exit 0; }; "
    "p=$(ldconfig -p 2>/dev/null | awk '/libnccl\\.so/{print $NF; exit}'); "
    "[ -n \"$p\" ] || exit 127; readlink -f \"$p\""
)
_CUDA = (
    "if command -v nvidia-smi >/dev/null 2>&1; then "
    "nvidia-smi --query-gpu=driver_version --format=csv,noheader; "
    "elif [ -r /proc/driver/nvidia/version ]; then cat /proc/driver/nvidia/version; "
    "else exit 127; fi"
)
_CUDA_TOOLKIT = (
    "if [ -r /usr/local/cuda/version.json ]; then cat /usr/local/cuda/version.json; "
    "elif command -v nvcc >/dev/null 2>&1; then nvcc --version; else exit 127; fi"
)


def root_read(command: str, try_first: bool = True) -> str:
    """`command` for a read that may need root: as is for root; for another user first as
    itself (`try_first`: lldpd's socket may let it in), then through `sudo -n` (never a
    password prompt: where sudo wants one, sudo's own message is the output)."""
    tool = command.split()[0]
    fallback = f"{command} 2>/dev/null || sudo -n {command}" if try_first else (
        f"sudo -n {command}")
    return (f"command -v {tool} >/dev/null 2>&1 || exit 127; "
            f"if [ \"$(id -u)\" = 0 ]; then {command}; else {fallback}; fi")


_IPTABLES = root_read("iptables -S FORWARD", try_first=False)

#: The longest the LLDP read waits for a cabled twin's neighbour to show up, seconds.
LLDP_WAIT_S = 2.0
_LLDP_STEP_S = 0.1


def lldp_command(cabled: Iterable[str] = ()) -> SparkCommand:
    """Announce, wait (bounded) for each cabled twin with carrier to list a neighbour, read.

    `lldpcli update` makes lldpd send an LLDPDU on every port now, so the neighbours (the
    other Sparks' batches do the same) hear each other within a fraction of a second rather
    than a tx-interval. The wait only matters right after a link came up (lldpd forgets a
    port's neighbours while it is down): a twin that has a neighbour, or has no carrier, is
    not waited for. lldpd's control socket needs root or group _lldpd: the user first, then
    `sudo -n` (as `root_read`).
    """
    devs = list(cabled)
    for dev in devs:
        if not NETDEV_NAME.match(dev):
            raise ValueError(f"not a netdev name: {dev!r}")
    tries = int(LLDP_WAIT_S / _LLDP_STEP_S)
    wait = (
        f"i=0; while [ $i -lt {tries} ]; do n=$($L -f keyvalue show neighbors 2>/dev/null); "
        "w=0; for d in " + " ".join(devs) + "; do "
        "[ \"$(cat /sys/class/net/$d/carrier 2>/dev/null)\" = 1 ] || continue; "
        "printf '%s\\n' \"$n\" | grep -qF \"lldp.$d.via=\" || w=1; done; "
        f"[ $w = 0 ] && break; sleep {_LLDP_STEP_S}; i=$((i+1)); done; "
    ) if devs else ""
    shell = (
        "command -v lldpcli >/dev/null 2>&1 || exit 127; L=lldpcli; "
        "if [ \"$(id -u)\" != 0 ] && ! lldpcli show configuration >/dev/null 2>&1; then "
        "L='sudo -n lldpcli'; fi; $L update >/dev/null 2>&1; "
        + wait + "$L -f json show neighbors"
    )
    return SparkCommand("lldpcli", shell, "lldpcli", "lldpcli")


#: Host-wide commands, in the order they run.
HOST_COMMANDS: tuple[SparkCommand, ...] = (
    SparkCommand("hostname", "hostname", None, "hostname"),
    SparkCommand("uname_r", "uname -r", None, "uname"),
    SparkCommand("ip_link", "ip -j -d link", "ip_link", "ip"),
    SparkCommand("ip_addr", "ip -j addr", "ip_addr", "ip"),
    SparkCommand("ip_route", "ip -j route", "ip_route", "ip"),
    SparkCommand("ibdev2netdev", "ibdev2netdev", "ibdev2netdev", "ibdev2netdev", empty_ok=True),
    SparkCommand("rdma_link", "rdma link show", "rdma_link", "rdma", empty_ok=True),
    SparkCommand("show_gids", "show_gids", "show_gids", "show_gids", empty_ok=True),
    SparkCommand("sysfs_gids", _SYSFS_GIDS, "sysfs_gids", "sysfs gids", ok_rc=(0, 2),
                 empty_ok=True),
    lldp_command(),
    SparkCommand("nccl", _NCCL, None, "nccl"),
    SparkCommand("cuda_driver", _CUDA, None, "nvidia driver"),
    SparkCommand("cuda_toolkit", _CUDA_TOOLKIT, None, "cuda toolkit"),
    SparkCommand("chronyc_tracking", "chronyc tracking", "chronyc_tracking", "chronyc"),
    SparkCommand("timedatectl", "timedatectl show", None, "timedatectl"),
    SparkCommand("iptables_forward", _IPTABLES, "iptables_forward", "iptables"),
)


#: Exit code of a per-twin command whose netdev does not exist (one note, not three errors).
ABSENT_RC = 100


def _on_twin(netdev: str, command: str) -> str:
    return (f"[ -e /sys/class/net/{netdev} ] || {{ echo 'no netdev {netdev}'; "
            f"exit {ABSENT_RC}; }}; {command}")


#: A Linux netdev name (IFNAMSIZ), safe to put in a shell command unquoted.
NETDEV_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,15}$")


def twin_commands(netdev: str) -> tuple[SparkCommand, ...]:
    """The per-twin commands: ethtool, ethtool -i, mlnx_qos."""
    if not NETDEV_NAME.match(netdev):
        raise ValueError(f"not a netdev name: {netdev!r}")
    return (
        SparkCommand(f"ethtool:{netdev}", _on_twin(netdev, f"ethtool {netdev}"), "ethtool",
                     "ethtool", netdev),
        SparkCommand(f"ethtool_i:{netdev}", _on_twin(netdev, f"ethtool -i {netdev}"),
                     "ethtool_i", "ethtool", netdev),
        SparkCommand(f"mlnx_qos:{netdev}", _on_twin(netdev, root_read(f"mlnx_qos -i {netdev}")),
                     "mlnx_qos", "mlnx_qos", netdev),
    )


def _with_lldp(rows: Iterable[SparkCommand], cabled: Iterable[str]) -> list[SparkCommand]:
    wait = lldp_command(cabled)
    return [wait if c.name == "lldpcli" else c for c in rows]


def spark_commands(twins: Iterable[str],
                   cabled: Iterable[str] | None = None) -> tuple[SparkCommand, ...]:
    """The whole batch for a Spark whose fabric twins are `twins`; the LLDP read waits for
    the `cabled` ones (default: all twins)."""
    twins = list(twins)
    rows = _with_lldp(HOST_COMMANDS, twins if cabled is None else cabled)
    for netdev in twins:
        rows.extend(twin_commands(netdev))
    return tuple(rows)


#: Host-wide commands `fabric gate` re-reads (the fingerprint's inputs), in the order they run.
GATE_COMMANDS: tuple[str, ...] = ("ip_link", "ip_addr", "lldpcli", "show_gids", "sysfs_gids")


def gate_commands(twins: Iterable[str]) -> tuple[SparkCommand, ...]:
    """The narrow batch `fabric gate` runs: links, addresses, LLDP, GIDs and `ethtool` (speed)
    of the cabled `twins` only; the same rows as the full batch, so the same builder reads it."""
    twins = list(twins)
    rows = _with_lldp((c for c in HOST_COMMANDS if c.name in GATE_COMMANDS), twins)
    rows += [twin_commands(netdev)[0] for netdev in twins]
    return tuple(rows)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


#: Runs one command: output captured (stdout and stderr together), stdin closed, rc recorded.
_RUNNER = (
    "export LC_ALL=C PAGER=cat SYSTEMD_PAGER= PATH=\"$PATH:/usr/sbin:/sbin\"\n"
    "r() { printf '%s %s@@@\\n' \"$M\" \"$1\"; o=$(sh -c \"$2\" </dev/null 2>&1); c=$?; "
    "[ -n \"$o\" ] && printf '%s\\n' \"$o\"; printf '%s %s rc=%s@@@\\n' \"$M\" \"$1\" \"$c\"; }\n"
)


def render_script(commands: Iterable[SparkCommand]) -> str:
    """The batched POSIX shell script: one `r NAME 'CMD'` line per command, then END."""
    lines = [f"M={MARK}", _RUNNER.rstrip("\n")]
    lines += [f"r {_quote(c.name)} {_quote(c.shell)}" for c in commands]
    lines.append(f"r {END} true")
    return "\n".join(lines) + "\n"
