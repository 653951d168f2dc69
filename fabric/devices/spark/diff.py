"""A Spark's half of intent minus facts: the file diffs and runtime commands that make its
twins match the intent, and why a host must not be changed as it is."""

from __future__ import annotations

import difflib
from dataclasses import replace

import yaml

from fabric.devices.contract import PushRefused
from fabric.devices.spark import qos
from fabric.devices.spark.model import FileChange, NetdevWant, SparkChanges
from fabric.devices.spark.netplan import ForeignDefinition
from fabric.devices.spark.platform import (
    ARP_POLICY,
    DEFAULT_MGMT,
    ECN_POINTS,
    NETPLAN_PATH,
    QOS_FILES,
    QOS_SCRIPT_PATH,
    SPARK_FILES,
)
from fabric.devices.spark.render import render_spark_files, spark_wants
from fabric.devices.spark.snapshot import SparkSnapshot
from fabric.errors import ParseError
from fabric.facts import SparkFacts
from fabric.intent.model import Intent
from fabric.intent.platforms import RoceQos, roce_qos
from fabric.parsers import parse
from fabric.parsers.records import MlnxQos


def diff_spark(intent: Intent, facts: SparkFacts, snap: SparkSnapshot,
               adopt: bool = False, switch_in_push: bool = True) -> SparkChanges:
    """File diffs (netplan, sysctl.d, adopted foreign definitions, the lossless RoCE script and
    udev rules) plus the runtime commands that make the twins match (lossless: mlnx_qos, RoCE
    ECN, RDMA CM ToS too); `refused` says why the host must not be changed as it is."""
    host = facts.host
    wants = spark_wants(intent, host)
    files = tuple(file_change(host, path, snap.file(path), new)
                  for path, new in render_spark_files(intent, host).items())
    commands: list[str] = []
    touched: list[str] = []
    notes: list[str] = []
    refusals: list[str] = []
    if snap.has_netplan:
        renderer, source = snap.renderer(NETPLAN_PATH)
        notes.append(f"netplan renderer of this host: {renderer} (from "
                     f"{source or 'netplan default'}); the twins follow it and it is not changed")
    foreign = snap.foreign(NETPLAN_PATH, [w.netdev for w in wants])
    if foreign:
        adopted, blocked = adopt_foreign(host, snap, foreign, {w.netdev for w in wants}, adopt)
        files += adopted
        refusals += blocked
    qos_cmds: dict[str, list[str]] = {}
    if intent.lossless:
        qos_cmds, qos_notes, qos_refusal_ = spark_qos(intent, facts, snap)
        notes += qos_notes
        refusals += [qos_refusal_] if qos_refusal_ else []
        if not switch_in_push and intent.switch is not None:
            notes.append(f"qos: lossless: {intent.switch.host} is not in this push; the lanes "
                         f"of {host} must carry the lossless class too (push the switch)")
    else:
        left = [p for p in QOS_FILES if snap.file(p) is not None]
        if left:
            notes.append(f"qos: lossy, but {', '.join(left)} from a lossless push are still "
                         "here: push leaves them; `fabric push rollback RUN_ID` of that push "
                         "removes them")
    arp_done: set[str] = set()
    for want in wants:
        cmds = _netdev_commands(facts, want, notes)
        cmds += qos_cmds.get(want.netdev, [])
        if want.netdev in facts.netdevs:
            for dev in (want.netdev, snap.stacked_on(want.netdev)):
                if dev is not None and dev not in arp_done:
                    arp_done.add(dev)
                    arp = _arp_command(snap, dev)
                    if arp and dev != want.netdev:
                        touched.append(dev)
                    cmds += arp
        if cmds:
            touched.append(want.netdev)
        commands += cmds
    check_safe(host, touched, intent.hosts[host].mgmt_interface, snap.connected_netdev())
    changeset = SparkChanges(host=host, files=files, commands=tuple(commands), wants=wants,
                     touched=tuple(touched), notes=tuple(notes), netplan=snap.has_netplan)
    if changeset.changes and not snap.can_write:
        refusals.insert(0, sudo_refusal(host, snap))
    if snap.unreadable:
        notes.append(f"could not read {', '.join(snap.unreadable)} as {snap.user}: the diff "
                     "treats them as absent")
    return replace(changeset, refused="; ".join(refusals) or None)


def sudo_refusal(host: str, snap: SparkSnapshot) -> str:
    """Why a login that cannot become root without a password is refused, and the fix."""
    why = ("sudo asks for a password" if snap.privilege == "password"
           else "sudo is not installed")
    return (f"user {snap.user} cannot change {host} ({why}; push runs `sudo -n`, never "
            f"typing a password). Allow it on {host} with `sudo visudo -f "
            f"/etc/sudoers.d/fabric` and the line: {snap.user} ALL=(ALL) NOPASSWD: ALL")


def adopt_foreign(host: str, snap: SparkSnapshot, foreign: list[ForeignDefinition],
                  twins: set[str], adopt: bool) -> tuple[tuple[FileChange, ...], list[str]]:
    """Other definitions of the twins: with `adopt`, the file changes that take them over
    (a file defining only twins is removed, one defining more loses the twins' stanzas);
    otherwise (or where push cannot take a file over) why the host is refused."""
    listed = "; ".join(str(f) for f in foreign)
    if not adopt:
        return (), [f"other definitions of the fabric twins would be merged with "
                    f"{NETPLAN_PATH} (their addresses add up and shift GID indexes): "
                    f"{listed}. Remove them, or run push with --adopt-foreign to take them "
                    "over (backed up, then removed)"]
    blocked = [str(f) for f in foreign if not f.adoptable]
    if blocked:
        return (), [f"cannot take over {'; '.join(blocked)}: only files under /etc are "
                    "adopted; remove them by hand"]
    matched = [str(f) for f in foreign if f.by_match]
    if matched:
        return (), [f"cannot take over {'; '.join(matched)}: it catches the twins by a name "
                    "pattern or MAC address (and may catch other devices); edit it by hand so "
                    "that it no longer matches them"]
    out: list[FileChange] = []
    for f in foreign:
        old = snap.file(f.path)
        new = None if f.kind == "networkmanager" or old is None else without_twins(old, twins)
        out.append(file_change(host, f.path, old, new, snap.modes.get(f.path, "600")))
    return tuple(out), []


def without_twins(text: str, twins: set[str]) -> str | None:
    """A netplan file's text without the stanzas of `twins`; None if nothing else is left."""
    doc = yaml.safe_load(text) or {}
    network = doc.get("network") or {}
    left = False
    for kind, section in list(network.items()):
        if not isinstance(section, dict) or kind in ("version", "renderer"):
            continue
        for key in list(section):
            conf = section[key]
            match = conf.get("match", {}) if isinstance(conf, dict) else {}
            name = match.get("name") if isinstance(match, dict) else None
            if key in twins or name in twins:
                del section[key]
        if section:
            left = True
        else:
            del network[kind]
    if not left:
        return None
    head = f"# taken over by `fabric push`: the fabric twins live in {NETPLAN_PATH}\n"
    return head + yaml.safe_dump(doc, sort_keys=False)


def file_change(host: str, path: str, old: str | None, new: str | None,
                mode: str | None = None) -> FileChange:
    """`path` on `host` from `old` (None: absent) to `new` (None: removed), as a unified diff."""
    udiff = "" if old == new else "".join(difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=f"{path} (on {host})" if old is not None else "/dev/null",
        tofile=f"{path} (intent)" if new is not None else "/dev/null"))
    return FileChange(path, old, new, udiff, mode or SPARK_FILES[path])


def check_safe(host: str, touched: list[str], mgmt: str | None, connected: str | None) -> None:
    """Refuse any change to the management interface or the one this session rides on."""
    for netdev in touched:
        if netdev == (mgmt or DEFAULT_MGMT):
            raise PushRefused(f"{host}: refusing to change {netdev}: it is the management "
                              "interface")
        if connected is not None and netdev == connected:
            raise PushRefused(f"{host}: refusing to change {netdev}: this SSH session is "
                              "connected through it")


def _netdev_commands(facts: SparkFacts, want: NetdevWant, notes: list[str]) -> list[str]:
    nd = facts.netdevs.get(want.netdev)
    dev = want.netdev
    if nd is None:
        notes.append(f"{dev} does not exist on {facts.host}: cannot configure it (cable "
                     "plugged? driver loaded?)")
        return []
    cmds: list[str] = []
    if nd.mtu != want.mtu:
        cmds.append(f"ip link set dev {dev} mtu {want.mtu}")
    if not nd.admin_up:
        cmds.append(f"ip link set dev {dev} up")
    cmds += [f"ip addr del {a} dev {dev}" for a in nd.addresses if a not in want.addresses]
    cmds += [f"ip addr add {a} dev {dev}" for a in want.addresses if a not in nd.addresses]
    return cmds


def _arp_command(snap: SparkSnapshot, netdev: str) -> list[str]:
    """`sysctl` that gives `netdev` the ARP policy (the twin, or the device it is stacked on)."""
    have = snap.arp.get(netdev, {})
    wrong = [k for k, v in ARP_POLICY.items() if have.get(k) != v]
    if not wrong:
        return []
    return ["sysctl -qw " + " ".join(f"net.ipv4.conf.{netdev}.{k}={ARP_POLICY[k]}"
                                     for k in wrong)]


def spark_qos(intent: Intent, facts: SparkFacts, snap: SparkSnapshot
              ) -> tuple[dict[str, list[str]], list[str], str | None]:
    """The Spark's half of lossless RoCE: per twin the runtime commands that differ from the
    host (mlnx_qos DSCP trust + PFC, RoCE ECN in sysfs, the RDMA CM ToS of its device), notes on
    what the host does not have, and why the host cannot take it (no mlnx_qos)."""
    host, r = facts.host, roce_qos()
    if not snap.has_mlnx_qos:
        return {}, [], (f"qos: lossless needs mlnx_qos (NVIDIA's mlnx-tools) on {host} to trust "
                        "DSCP and run PFC on the twins, and it is not installed: its lane stays "
                        "lossy too (both ends or neither). Install it, or set `qos: lossy`")
    out: dict[str, list[str]] = {}
    no_ecn: list[str] = []
    no_rdma: list[str] = []
    no_tool: list[str] = []
    for changeset in intent.interfaces(host):
        dev = changeset.netdev
        if dev not in facts.netdevs:
            continue
        cmds = _mlnx_qos_commands(snap, dev, r)
        ecn = snap.ecn.get(dev, {})
        if not ecn:
            no_ecn.append(dev)
        cmds += [f"echo 1 > {qos.ecn_path(dev, point, r)}" for point in ECN_POINTS
                 if point in ecn and ecn[point] != "1"]
        if changeset.rdma not in snap.rdma_present:
            no_rdma.append(changeset.rdma)
        elif not snap.has_cma_roce_tos:
            no_tool.append(changeset.rdma)
        elif snap.roce_tos.get(changeset.rdma) != str(r.traffic_class_byte):
            cmds.append(qos.tos_command(changeset.rdma))
        out[dev] = cmds
    notes = []
    if no_ecn:
        notes.append(f"RoCE ECN in sysfs ({qos.ecn_path('<twin>', 'np|rp', r)}) is absent on "
                     f"{', '.join(no_ecn)} (not an mlx5 netdev): not set; the persisted "
                     f"{QOS_SCRIPT_PATH} sets it where the driver has it")
    if no_rdma:
        notes.append(f"no RDMA device {', '.join(no_rdma)} here now: its RDMA CM ToS "
                     f"(cma_roce_tos) is set by {QOS_SCRIPT_PATH} when it appears")
    if no_tool:
        notes.append(f"cma_roce_tos not found: the RDMA CM ToS of {', '.join(no_tool)} is not "
                     f"set (NCCL uses NCCL_IB_TC={r.traffic_class_byte}, not RDMA CM)")
    return out, notes, None


def _mlnx_qos_commands(snap: SparkSnapshot, netdev: str, r: RoceQos) -> list[str]:
    """`mlnx_qos -i` where the twin's trust, PFC or DSCP map is not the recipe's."""
    text = snap.qos.get(netdev)
    try:
        found = [x for x in parse("mlnx_qos", text) if isinstance(x, MlnxQos)] if text else []
    except ParseError:
        found = []
    if not found:
        return [qos.mlnx_qos_command(netdev)]
    q = found[0]
    dscp_map = {d: p for p, ds in q.dscp2prio for d in ds}
    cmds = []
    if q.trust != "dscp" or tuple(q.pfc_enabled) != (r.priority,):
        cmds.append(qos.mlnx_qos_command(netdev))
    if q.trust == "dscp" and dscp_map and dscp_map.get(r.dscp) != r.priority:
        cmds.append(qos.dscp_map_command(netdev))  # shown only once DSCP is trusted
    return cmds
