"""What `collect_spark_facts` runs on a Spark, as data: one row per command.

Every command runs inside one batch (`fabric.remote.batch`; see `render_script`), all at once
on the host; each command is a job named by its row, whose output (stdout and stderr together)
and exit status come back as that row's section.
Conventions the rows rely on:

- exit 127 means "not installed" (the shell's own code for a missing command; snippets that
  test for a tool themselves exit 127 too); the row's `tool` then lands in `SparkFacts.missing`;
- `ok_rc` lists exit codes whose output is still parsed (grep exits 2 on EINVAL GID slots);
- `empty_ok`: empty output means "nothing there" (no RDMA devices), not a parse error;
- fallbacks (sysfs GIDs, timedatectl) always run: they are cheap reads, and the builder takes
  the primary section when it parsed and the fallback otherwise;
- LLDP is read fresh (`lldp_command`): where a cabled twin with carrier lists no neighbour
  yet, the Spark announces itself (`lldpcli update`, so every neighbour hears it now) and
  waits, bounded, until each does; then it reads.

Each row names the check `families` that judge what it reads (and the probes that need it:
`bw` and `nccl` pick RoCE GIDs, `counters` maps twins to RDMA devices). `FINGERPRINT` marks
what `fabric.fingerprint` reads (links, addresses, ethtool, LLDP and GIDs): every validation
collects it, so a narrowed run (`--only`) still stores a whole fingerprint, and it is the
narrow set `fabric gate` re-reads live (`gate_commands`). A row no family judges (`hostname`)
is read only by `fabric facts`, which runs every row (`families` None).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from fabric.facts_builder import ABSENT_RC
from fabric.remote.batch import batch_script

#: Pseudo-family of the rows `fabric.fingerprint` reads (a report's fingerprint, the gate).
FINGERPRINT = "fingerprint"


@dataclass(frozen=True)
class SparkCommand:
    """One command of the batch. `kind` is a `fabric.parsers` kind, None for raw text;
    `families`: the check families (and `FINGERPRINT`) that need its output."""

    name: str
    shell: str
    kind: str | None
    tool: str
    netdev: str | None = None
    ok_rc: tuple[int, ...] = (0,)
    empty_ok: bool = False
    families: frozenset[str] = frozenset()

    def wanted(self, families: Collection[str] | None) -> bool:
        """Whether a run judging `families` (None: everything, `fabric facts`) needs it."""
        return families is None or not self.families.isdisjoint(families)


def _fam(*names: str) -> frozenset[str]:
    return frozenset(names)


#: Who needs the RDMA device map and the GIDs: the gid checks, the probes that pick RoCE GID
#: indexes (bw: ib_write_bw, nccl: NCCL_IB_GID_INDEX) and the counters (RDMA hw_counters).
_RDMA = _fam("gid", "bw", "nccl", "counters")
_GIDS = _fam("gid", "bw", "nccl", FINGERPRINT)


_SYSFS_GIDS = (
    "set -- /sys/class/infiniband/*/ports/*/gids/*; [ -e \"$1\" ] || exit 0; "
    "grep -H . /sys/class/infiniband/*/ports/*/gids/* "
    "/sys/class/infiniband/*/ports/*/gid_attrs/types/* "
    "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs/*"
)
_NCCL = (
    "for f in /var/lib/dpkg/info/libnccl2.list /var/lib/dpkg/info/libnccl2:*.list; do "
    "[ -e \"$f\" ] || continue; "
    "v=$(dpkg-query -W -f='${Version}' libnccl2 2>/dev/null) && [ -n \"$v\" ] "
    "&& { echo \"$v\"; exit 0; }; break; done; "
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


#: The login's user id: the batch's prelude sets `U` once (`render_script`); a row run on its
#: own asks `id`.
_UID = "${U:-$(id -u)}"


def root_read(command: str, try_first: bool = True) -> str:
    """`command` for a read that may need root: as is for root; for another user first as
    itself (`try_first`: lldpd's socket may let it in), then through `sudo -n` (never a
    password prompt: where sudo wants one, sudo's own message is the output)."""
    tool = command.split()[0]
    fallback = f"{command} 2>/dev/null || sudo -n {command}" if try_first else (
        f"sudo -n {command}")
    return (f"command -v {tool} >/dev/null 2>&1 || exit 127; "
            f"if [ \"{_UID}\" = 0 ]; then {command}; else {fallback}; fi")


_IPTABLES = root_read("iptables -S FORWARD", try_first=False)

#: The longest the LLDP read waits for a cabled twin's neighbour to show up, seconds.
LLDP_WAIT_S = 2.0
_LLDP_STEP_S = 0.1


def lldp_command(cabled: Iterable[str] = ()) -> SparkCommand:
    """Read the neighbours; where a cabled twin with carrier lists none yet, announce, wait
    (bounded) until each does; read them as JSON.

    The wait only matters right after a link came up (lldpd forgets a port's neighbours
    while it is down): a twin that has a neighbour, or has no carrier, is not waited for.
    Then `lldpcli update` makes lldpd send an LLDPDU on every port now, so the neighbours
    (the other Sparks' batches do the same, and the switch polls for them) hear each other
    within a fraction of a second rather than a tx-interval. lldpd's control socket needs
    root or group _lldpd: the user first, then `sudo -n` (as `root_read`); `update` lldpcli
    offers to root alone (to a user who may read the socket it is an "incomplete command"),
    so it goes through `sudo -n` unless the login is root. In steady state (every cabled twin
    hears its neighbour) the row runs two `lldpcli` reads and nothing else.
    """
    devs = list(cabled)
    for dev in devs:
        if not NETDEV_NAME.match(dev):
            raise ValueError(f"not a netdev name: {dev!r}")
    tries = int(LLDP_WAIT_S / _LLDP_STEP_S)
    read = "n=$($L -f keyvalue show neighbors 2>/dev/null)"
    missing = (
        "missing() { w=0; for d in " + " ".join(devs) + "; do c=; "
        "{ read -r c <\"/sys/class/net/$d/carrier\"; } 2>/dev/null; [ \"$c\" = 1 ] || continue; "
        "case \"$n\" in *\"lldp.$d.via=\"*) ;; *) w=1;; esac; done; [ $w = 1 ]; }; "
        "if missing; then "
        "{ if [ \"" + _UID + "\" = 0 ]; then lldpcli update; else sudo -n lldpcli update; fi; } "
        ">/dev/null 2>&1; "
        f"i=0; while [ $i -lt {tries} ] && missing; do sleep {_LLDP_STEP_S}; i=$((i+1)); "
        f"{read}; done; fi; "
    ) if devs else ""
    shell = (
        "command -v lldpcli >/dev/null 2>&1 || exit 127; L=lldpcli; "
        "n=$(lldpcli -f keyvalue show neighbors 2>/dev/null) || "
        "{ [ \"" + _UID + "\" = 0 ] || L='sudo -n lldpcli'; " + read + "; }; "
        + missing + "$L -f json show neighbors"
    )
    return SparkCommand("lldpcli", shell, "lldpcli", "lldpcli",
                        families=_fam("cabling", FINGERPRINT))


#: Host-wide commands, in the order they run.
HOST_COMMANDS: tuple[SparkCommand, ...] = (
    SparkCommand("hostname", "read -r h </proc/sys/kernel/hostname && echo \"$h\"", None,
                 "hostname"),
    SparkCommand("uname_r", "read -r v </proc/sys/kernel/osrelease && echo \"$v\"", None,
                 "uname", families=_fam("version")),
    SparkCommand("ip_link", "ip -j -d link", "ip_link", "ip",
                 families=_fam("link", "mtu", "addr", FINGERPRINT)),
    SparkCommand("ip_addr", "ip -j addr", "ip_addr", "ip",
                 families=_fam("link", "mtu", "addr", FINGERPRINT)),
    SparkCommand("ip_route", "ip -j route", "ip_route", "ip", families=_fam("route")),
    SparkCommand("ibdev2netdev", "ibdev2netdev", "ibdev2netdev", "ibdev2netdev", empty_ok=True,
                 families=_RDMA),
    SparkCommand("rdma_link", "rdma link show", "rdma_link", "rdma", empty_ok=True,
                 families=_RDMA),
    SparkCommand("show_gids", "show_gids", "show_gids", "show_gids", empty_ok=True,
                 families=_GIDS),
    SparkCommand("sysfs_gids", _SYSFS_GIDS, "sysfs_gids", "sysfs gids", ok_rc=(0, 2),
                 empty_ok=True, families=_GIDS),
    lldp_command(),
    SparkCommand("nccl", _NCCL, None, "nccl", families=_fam("version")),
    SparkCommand("cuda_driver", _CUDA, None, "nvidia driver", families=_fam("version")),
    SparkCommand("cuda_toolkit", _CUDA_TOOLKIT, None, "cuda toolkit", families=_fam("version")),
    SparkCommand("chronyc_tracking", "chronyc tracking", "chronyc_tracking", "chronyc",
                 families=_fam("time")),
    SparkCommand("timedatectl", "timedatectl show", None, "timedatectl", families=_fam("time")),
    SparkCommand("iptables_forward", _IPTABLES, "iptables_forward", "iptables",
                 families=_fam("forward")),
)


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
                     "ethtool", netdev, families=_fam("link", FINGERPRINT)),
        SparkCommand(f"ethtool_i:{netdev}", _on_twin(netdev, f"ethtool -i {netdev}"),
                     "ethtool_i", "ethtool", netdev, families=_fam("version")),
        SparkCommand(f"mlnx_qos:{netdev}", _on_twin(netdev, root_read(f"mlnx_qos -i {netdev}")),
                     "mlnx_qos", "mlnx_qos", netdev, families=_fam("qos", "counters")),
    )


def _with_lldp(rows: Iterable[SparkCommand], cabled: Iterable[str]) -> list[SparkCommand]:
    wait = lldp_command(cabled)
    return [wait if c.name == "lldpcli" else c for c in rows]


def spark_commands(twins: Iterable[str], cabled: Iterable[str] | None = None,
                   families: Collection[str] | None = None) -> tuple[SparkCommand, ...]:
    """The batch for a Spark whose fabric twins are `twins`: every row (`families` None) or
    the rows those families need, whose per-twin rows are for the `cabled` twins only (no
    check judges a spare twin's ethtool or QoS); the LLDP read waits for the `cabled` ones
    (default: all)."""
    twins = list(twins)
    used = twins if cabled is None else list(cabled)
    rows = _with_lldp(HOST_COMMANDS, used)
    for netdev in twins if families is None else [t for t in twins if t in used]:
        rows.extend(twin_commands(netdev))
    return tuple(c for c in rows if c.wanted(families))


#: Host-wide commands `fabric gate` re-reads (the fingerprint's inputs), in the order they run.
GATE_COMMANDS: tuple[str, ...] = tuple(c.name for c in HOST_COMMANDS
                                       if c.wanted({FINGERPRINT}))


def gate_commands(twins: Iterable[str]) -> tuple[SparkCommand, ...]:
    """The narrow batch `fabric gate` runs: the `FINGERPRINT` rows (links, addresses, LLDP,
    GIDs, `ethtool` for the speed) of the cabled `twins` only; the same rows as the full
    batch, so the same builder reads it."""
    twins = list(twins)
    return spark_commands(twins, twins, {FINGERPRINT})


#: Run first in the batch's own shell: a plain C locale without pagers, the sbin directories,
#: a low priority, and the login's user id once (`U`, read by `root_read` and the LLDP row).
_PRELUDE = (
    "export LC_ALL=C PAGER=cat SYSTEMD_PAGER= PATH=\"$PATH:/usr/sbin:/sbin\"\n"
    "renice -n 10 $$ >/dev/null 2>&1; U=$(id -u)\n"
)


def render_script(commands: Iterable[SparkCommand]) -> str:
    """The batch of `commands`: every command at once, each a job named by its row, so the
    batch takes as long as its slowest command, not the sum."""
    return batch_script({c.name: c.shell for c in commands}, prelude=_PRELUDE,
                        tmp="fabric-facts")
