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
- LLDP is read fresh: the Spark first announces the collection's beacon (`beacon_command`:
  every neighbour hears it now, and lldpd records the changed frame anew), then the read
  (`lldp_command`) waits, bounded, until each cabled twin with carrier lists a neighbour and
  each twin cabled to another Spark has heard that Spark's beacon.

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

from fabric.devices import contract
from fabric.facts_builder import ABSENT_RC
from fabric.neighbors import BEACON_OUI, BEACON_SUBTYPE
from fabric.remote.batch import batch_script

#: Pseudo-family of the rows `fabric.fingerprint` reads (a report's fingerprint, the gate).
FINGERPRINT = contract.FINGERPRINT


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

#: The host family's reads (`validators.host`): BIOS from DMI, NetworkManager's profiles
#: (exit 8, NetworkManager not running: no profile is active, nothing listed), logind's
#: configuration as systemd applies it (main file, then drop-ins; without systemd-analyze
#: the /etc files in the same order), the memory.
_DMI = (
    "[ -e /sys/class/dmi/id/bios_version ] || exit 127; "
    "for f in vendor version date; do [ -r /sys/class/dmi/id/bios_$f ] && "
    "grep -H . /sys/class/dmi/id/bios_$f; done; true"
)
_NMCLI = (
    "command -v nmcli >/dev/null 2>&1 || exit 127; "
    "o=$(nmcli -t -f NAME,UUID,TYPE,DEVICE connection show 2>&1); r=$?; "
    "[ $r = 8 ] && exit 0; [ -n \"$o\" ] && printf '%s\\n' \"$o\"; exit $r"
)
_LOGIND = (
    "if command -v systemd-analyze >/dev/null 2>&1; then "
    "systemd-analyze cat-config systemd/logind.conf 2>/dev/null && exit 0; fi; "
    "for f in /etc/systemd/logind.conf /etc/systemd/logind.conf.d/*.conf; do "
    "[ -r \"$f\" ] && { echo \"# $f\"; cat \"$f\"; echo; }; done; true"
)
_MEMINFO = "grep -E '^(MemTotal|MemAvailable):' /proc/meminfo"
#: Every local image's id, tags and environment (the NCCL an engine image declares), read
#: without starting a container; as the user where it may use docker, else through `sudo -n`.
#: Each docker call is bounded (`DOCKER_WAIT_S`): a hung dockerd must not hold the batch.
DOCKER_WAIT_S = 5
_DOCKER_IMAGES = (
    "command -v docker >/dev/null 2>&1 || exit 127; "
    f"w={DOCKER_WAIT_S}; t=\"timeout -k 1 $w\"; d=docker; "
    "hung=\"docker did not answer within $w s (is dockerd hung?)\"; "
    "ids=$($t $d image ls -q --no-trunc 2>&1); r=$?; "
    "if [ $r != 0 ] && [ $r != 124 ] && [ \"${U:-$(id -u)}\" != 0 ] "
    "&& sudo -n true 2>/dev/null; then d='sudo -n docker'; "
    "ids=$($t $d image ls -q --no-trunc 2>&1); r=$?; fi; "
    "[ $r = 124 ] && { echo \"$hung\"; exit 1; }; [ $r = 0 ] || { echo \"$ids\"; exit 1; }; "
    "ids=$(printf '%s\\n' $ids | sort -u); [ -n \"$ids\" ] || exit 0; "
    "$t $d image inspect --format '{{.Id}} {{json .RepoTags}} {{json .Config.Env}}' $ids; "
    "r=$?; [ $r = 124 ] && echo \"$hung\"; exit $r"
)
_HOST = _fam("host")


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

#: The longest the LLDP read waits for a cabled twin's neighbour (or a Spark neighbour's
#: beacon) to show up, seconds. A healthy fabric answers at once; right after a re-plug
#: lldpd may take a few seconds to take a new port in (3 s was too short on a loaded lab).
LLDP_WAIT_S = 5.0
_LLDP_STEP_S = 0.1
#: Steps between announcements while a Spark neighbour's beacon is awaited (1 s).
_REANNOUNCE_STEPS = 10
#: A beacon value as `fabric.neighbors.new_beacon` makes it, safe in a shell word.
_BEACON = re.compile(r"^[0-9A-F]{2}(,[0-9A-F]{2}){0,31}$")


def _as_root(command: str) -> str:
    """`command` as root: as is for root, else through `sudo -n`."""
    return f"{{ if [ \"{_UID}\" = 0 ]; then {command}; else sudo -n {command}; fi; }}"


def beacon_command(beacon: str) -> SparkCommand:
    """Announce `beacon`: lldpd's custom TLV (`fabric.neighbors.BEACON_OUI`) set to it, which
    makes lldpd send an LLDPDU on every port at once; every neighbour's lldpd sees the frame
    change and records it anew. Echoes the beacon when lldpd took it (its own message and a
    non-zero exit otherwise). lldpd's `configure` is offered to root alone: `sudo -n`."""
    if not _BEACON.match(beacon):
        raise ValueError(f"not a beacon value: {beacon!r}")
    oui = BEACON_OUI.lower()
    configure = (f"lldpcli configure lldp custom-tlv replace oui {oui} subtype {BEACON_SUBTYPE}"
                 f" oui-info {beacon}")
    shell = ("command -v lldpcli >/dev/null 2>&1 || exit 127; "
             f"o=$({_as_root(configure)} 2>&1) || {{ echo \"$o\"; exit 1; }}; echo {beacon}")
    return SparkCommand("lldp_beacon", shell, None, "lldpcli",
                        families=_fam("cabling", FINGERPRINT))


def lldp_command(cabled: Iterable[str] = (), beacon: str | None = None,
                 beacon_twins: Iterable[str] = ()) -> SparkCommand:
    """Read the neighbours as JSON, once each cabled twin with carrier lists one and each of
    `beacon_twins` (the twins cabled to another Spark) with carrier has heard `beacon`, or
    after `LLDP_WAIT_S`.

    Without a beacon (`fabric.neighbors`), where a twin lacks a neighbour, `lldpcli update`
    makes lldpd send an LLDPDU on every port now, so the neighbours hear each other within a
    fraction of a second rather than a tx-interval (with one, `beacon_command` announced, and
    the wait announces again each second while a Spark neighbour's beacon is unheard).
    lldpd's control socket needs root or group _lldpd: the user first, then `sudo -n` (as
    `root_read`); `update` lldpcli offers to root alone. In steady state the row runs two
    `lldpcli` reads and nothing else.
    """
    devs, heard = list(cabled), list(beacon_twins)
    for dev in devs + heard:
        if not NETDEV_NAME.match(dev):
            raise ValueError(f"not a netdev name: {dev!r}")
    if beacon is not None and not _BEACON.match(beacon):
        raise ValueError(f"not a beacon value: {beacon!r}")
    tries = int(LLDP_WAIT_S / _LLDP_STEP_S)
    read = "n=$($L -f keyvalue show neighbors 2>/dev/null)"
    carrier = ("c=; { read -r c <\"/sys/class/net/$d/carrier\"; } 2>/dev/null; "
               "[ \"$c\" = 1 ] || continue; ")
    lacking = ("for d in " + " ".join(devs) + "; do " + carrier +
               "case \"$n\" in *\"lldp.$d.via=\"*) ;; *) w=1;; esac; done; ") if devs else ""
    unheard = ("for d in " + " ".join(heard) + "; do " + carrier +
               "case \"$n\" in *\"lldp.$d.unknown-tlvs.unknown-tlv=" + beacon +
               "\"*) ;; *) w=1;; esac; done; ") if beacon and heard else ""
    update = _as_root("lldpcli update") + " >/dev/null 2>&1; "
    announce = "" if beacon else update
    # with a beacon, announce again each second while a Spark neighbour is unheard: a frame
    # sent before a just re-plugged peer's lldpd listened again is lost, and the peer's own
    # wait re-announces the same way
    again = (f"[ $((i % {_REANNOUNCE_STEPS})) = 0 ] && {update}") if beacon and heard else ""
    missing = (
        "missing() { w=0; " + lacking + unheard + "[ $w = 1 ]; }; "
        "if missing; then " + announce +
        f"i=0; while [ $i -lt {tries} ] && missing; do sleep {_LLDP_STEP_S}; i=$((i+1)); "
        f"{again}{read}; done; fi; "
    ) if lacking or unheard else ""
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
    SparkCommand("nccl", _NCCL, None, "nccl", families=_fam("version", "host")),
    SparkCommand("cuda_driver", _CUDA, None, "nvidia driver", families=_fam("version")),
    SparkCommand("cuda_toolkit", _CUDA_TOOLKIT, None, "cuda toolkit", families=_fam("version")),
    SparkCommand("chronyc_tracking", "chronyc tracking", "chronyc_tracking", "chronyc",
                 families=_fam("time")),
    SparkCommand("timedatectl", "timedatectl show", None, "timedatectl", families=_fam("time")),
    SparkCommand("iptables_forward", _IPTABLES, "iptables_forward", "iptables",
                 families=_fam("forward")),
    SparkCommand("dmi_bios", _DMI, "dmi_bios", "dmi", families=_fam("host", "version")),
    SparkCommand("nmcli", _NMCLI, "nmcli_connections", "nmcli", empty_ok=True,
                 families=_HOST),
    SparkCommand("logind", _LOGIND, "logind_conf", "logind.conf", empty_ok=True,
                 families=_HOST),
    SparkCommand("meminfo", _MEMINFO, "meminfo", "meminfo", families=_HOST),
    SparkCommand("docker_images", _DOCKER_IMAGES, "docker_images", "docker", empty_ok=True,
                 families=_HOST),
)


def _on_twin(netdev: str, command: str) -> str:
    return (f"[ -e /sys/class/net/{netdev} ] || {{ echo 'no netdev {netdev}'; "
            f"exit {ABSENT_RC}; }}; {command}")


#: A Linux netdev name (IFNAMSIZ), safe to put in a shell command unquoted.
NETDEV_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,15}$")


def _pcie(netdev: str) -> str:
    """The PCIe link of the twin's function, read from sysfs (no output: no PCI device,
    e.g. veth), and its PCI address as a `slot` line."""
    d = f"/sys/class/net/{netdev}/device"
    return (f"d={d}; [ -e $d/current_link_speed ] || exit 0; grep -H . $d/current_link_speed "
            f"$d/current_link_width $d/max_link_speed $d/max_link_width; "
            f"s=$(readlink -f $d) && echo \"$d/slot:${{s##*/}}\"")


def twin_commands(netdev: str) -> tuple[SparkCommand, ...]:
    """The per-twin commands: ethtool, ethtool -i, mlnx_qos, the PCIe link."""
    if not NETDEV_NAME.match(netdev):
        raise ValueError(f"not a netdev name: {netdev!r}")
    return (
        SparkCommand(f"ethtool:{netdev}", _on_twin(netdev, f"ethtool {netdev}"), "ethtool",
                     "ethtool", netdev, families=_fam("link", FINGERPRINT)),
        SparkCommand(f"ethtool_i:{netdev}", _on_twin(netdev, f"ethtool -i {netdev}"),
                     "ethtool_i", "ethtool", netdev, families=_fam("version")),
        SparkCommand(f"mlnx_qos:{netdev}", _on_twin(netdev, root_read(f"mlnx_qos -i {netdev}")),
                     "mlnx_qos", "mlnx_qos", netdev, families=_fam("qos", "counters")),
        SparkCommand(f"pcie:{netdev}", _on_twin(netdev, _pcie(netdev)), "sysfs_pcie", "sysfs",
                     netdev, empty_ok=True, families=_HOST),
    )


def _with_lldp(rows: Iterable[SparkCommand], cabled: Iterable[str], beacon: str | None,
               beacon_twins: Iterable[str]) -> list[SparkCommand]:
    """`rows` with the LLDP read that waits for `cabled` (and `beacon` on `beacon_twins`),
    announced by the beacon row just before it."""
    wait = lldp_command(cabled, beacon, beacon_twins)
    out: list[SparkCommand] = []
    for c in rows:
        if c.name == "lldpcli":
            if beacon is not None:
                out.append(beacon_command(beacon))
            c = wait
        out.append(c)
    return out


def spark_commands(twins: Iterable[str], cabled: Iterable[str] | None = None,
                   families: Collection[str] | None = None, beacon: str | None = None,
                   beacon_twins: Iterable[str] = ()) -> tuple[SparkCommand, ...]:
    """The batch for a Spark whose fabric twins are `twins`: every row (`families` None) or
    the rows those families need, whose per-twin rows are for the `cabled` twins only (no
    check judges a spare twin's ethtool or QoS); the LLDP read waits for the `cabled` ones
    (default: all). With `beacon`, the host announces it (`beacon_command`) and the LLDP read
    also waits until `beacon_twins` hear it from their Spark neighbours."""
    twins = list(twins)
    used = twins if cabled is None else list(cabled)
    rows = _with_lldp(HOST_COMMANDS, used, beacon, beacon_twins)
    for netdev in twins if families is None else [t for t in twins if t in used]:
        rows.extend(twin_commands(netdev))
    return tuple(c for c in rows if c.wanted(families))


#: Host-wide commands `fabric gate` re-reads (the fingerprint's inputs), in the order they run.
GATE_COMMANDS: tuple[str, ...] = tuple(c.name for c in HOST_COMMANDS
                                       if c.wanted({FINGERPRINT}))


def gate_commands(twins: Iterable[str], beacon: str | None = None,
                  beacon_twins: Iterable[str] = ()) -> tuple[SparkCommand, ...]:
    """The narrow batch `fabric gate` runs: the `FINGERPRINT` rows (links, addresses, LLDP
    with its beacon, GIDs, `ethtool` for the speed) of the cabled `twins` only; the same rows
    as the full batch, so the same builder reads it."""
    twins = list(twins)
    return spark_commands(twins, twins, {FINGERPRINT}, beacon, beacon_twins)


#: Run first in the batch's own shell: a plain C locale without pagers, the sbin directories,
#: and the login's user id once (`U`, read by `root_read` and the LLDP row; bash knows it
#: as $EUID, a POSIX shell asks `id`).
_PRELUDE = (
    "export LC_ALL=C PAGER=cat SYSTEMD_PAGER= PATH=\"$PATH:/usr/sbin:/sbin\"\n"
    "U=${EUID:-$(id -u)}\n"
)
#: Then, unless the caller waits for nothing else, a low priority for the batch.
_RENICE = "renice -n {nice} $$ >/dev/null 2>&1\n"
#: The batch's niceness; read behind bandwidth tests, the lowest (the tests' clients and
#: servers come first on a busy host).
NICE, NICE_BEHIND = 10, 19


def render_script(commands: Iterable[SparkCommand], behind: bool = False,
                  niced: bool = True) -> str:
    """The batch of `commands`: every command at once, each a job named by its row, so the
    batch takes as long as its slowest command, not the sum, at a low priority (scripts
    beside it in a burst come first). `behind` (read behind bandwidth tests): one command
    after the other at the lowest priority, never more than one of its processes asking for
    the CPU the tests share (on a 2-core lab, thirty niced jobs at once still took enough of
    it to make a 1 s test a straggler). Not `niced`: at the login's priority, for the rows
    the next step waits for (`renice` itself is a process: about 5 ms of CPU)."""
    nice = NICE_BEHIND if behind else NICE if niced else None
    prelude = _PRELUDE + (_RENICE.format(nice=nice) if nice is not None else "")
    return batch_script({c.name: c.shell for c in commands}, parallel=not behind,
                        prelude=prelude, tmp="fabric-facts")
