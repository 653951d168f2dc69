"""`fabric lab up` and `fabric lab down`: build a lab out of namespaces, and remove it all."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.intent.locate import default_inventory, resolve_topology
from fabric.intent.model import Intent
from fabric.intent.platforms import routeros_properties
from fabric.lab import names, ns
from fabric.lab.host import hostenv, labfiles, lldp, sshd, switch, timesync
from fabric.lab.lifecycle import cabling, mgmt, panel, registry
from fabric.lab.lifecycle.registry import SCHEMA, LabInfo
from fabric.lab.routeros.platform import DEFAULT_CHIP_FAMILY

Progress = Callable[[str], None]
#: Host sysctls a Spark has from DGX OS (Ubuntu with systemd) that a new namespace lacks.
DGX_OS_SYSCTLS = {"net.ipv4.ping_group_range": "0 2147483647"}

TOOLS = ("ip", "tc", "unshare", "nsenter", "sysctl", "ssh-keygen", "openssl", "lldpcli", "ethtool",
         "netplan", "sudo", "mountpoint", sshd.SSHD, lldp.LLDPD)
#: How long a switch lane stays without link after a speed, FEC or autoneg change (seconds);
#: FABRIC_LAB_LINK_TRAINING_S sets the default (tests make it small).
LINK_TRAINING_ENV = "FABRIC_LAB_LINK_TRAINING_S"
DEFAULT_LINK_TRAINING_S = switch.DEFAULT_TRAINING_S


@dataclass(frozen=True)
class LabOptions:
    """How strict a lab is, recorded in lab.json under "options"."""

    #: sudo on the Sparks asks for the user's password (in secrets.json) instead of NOPASSWD
    sudo_password: bool = False
    #: the CRS804 starts prepared (management address on ether1, outside the fabric bridge)
    #: instead of from its factory configuration
    switch_prepared: bool = False
    #: seconds a switch lane stays without link after a speed/FEC/autoneg change
    link_training_s: float = DEFAULT_LINK_TRAINING_S
    #: the switch chip's family (platforms.yaml routeros_properties.families): which QoS
    #: properties its menus have
    switch_chip: str = DEFAULT_CHIP_FAMILY


def default_link_training() -> float:
    """FABRIC_LAB_LINK_TRAINING_S, else DEFAULT_LINK_TRAINING_S."""
    text = os.environ.get(LINK_TRAINING_ENV, "").strip()
    if not text:
        return DEFAULT_LINK_TRAINING_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise InputError(f"{LINK_TRAINING_ENV}={text!r}: give the seconds as a number >= 0")
    return value


@dataclass
class LabHost:
    """One lab host before it is built: where it lives and what it runs."""

    name: str
    role: str
    namespace: str
    mgmt_if: str
    mgmt_ip: str
    mgmt_prefix: int
    root_veth: str
    fabric_ifs: list[str]
    pids: dict[str, int] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return asdict(self)


def check_prerequisites() -> None:
    """Root and the tools the lab runs; LabError naming what is missing."""
    if os.geteuid() != 0:
        raise ns.LabError("the lab needs root (network namespaces, mounts, sshd); run as root")
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise ns.LabError(f"missing tools: {', '.join(missing)} (run `make apt`)")
    if timesync.binaries() is None:
        raise ns.LabError("chrony for the lab's time server is not unpacked (run `make "
                          "lab-tools`, or set FABRIC_LAB_CHRONY)")


@contextlib.contextmanager
def _labs_lock() -> Iterator[None]:
    names.LABS_ROOT.mkdir(parents=True, exist_ok=True, mode=0o755)
    with open(names.LABS_ROOT / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def lab_hosts(lab: str, intent: Intent, slot: int) -> dict[str, LabHost]:
    used = list(intent.cabled)
    if names.PANEL_HOST in used:
        raise InputError(f"a lab cannot have a host named {names.PANEL_HOST!r}: its patch "
                         "panel's namespace takes that name")
    others = 0
    out: dict[str, LabHost] = {}
    for name in used:
        host = intent.hosts[name]
        index = mgmt.host_index(host.role, host.node_id, others)
        if host.role != "spark":
            others += 1
        addr = mgmt.address(slot, index)
        if host.role == "switch":
            fabric = sorted(link.end_of(name).port for link in intent.links_of(name))
            mgmt_if = names.SWITCH_MGMT_IF
        else:
            fabric = cabling.twins_of(host)
            mgmt_if = host.mgmt_interface or names.SPARK_MGMT_IF
        out[name] = LabHost(name, host.role, names.netns(lab, name), mgmt_if,
                                str(addr.ip), addr.network.prefixlen,
                                names.mgmt_veth(slot, name), fabric)
    return out


def _record(lab: str, intent: Intent, source: Path, slot: int, state: str,
            hosts: dict[str, LabHost], created: str, options: LabOptions) -> dict[str, Any]:
    return {"schema": SCHEMA, "name": lab, "topology": intent.name,
            "topology_source": str(source.resolve()), "created": created, "state": state,
            "slot": slot, "subnet": str(mgmt.subnet(slot)), "bridge": names.bridge(lab),
            "switch": intent.switch.host if intent.switch else None,
            "api_port": switch.API_PORT, "spark_user": names.SPARK_USER,
            "options": asdict(options),
            "panel": ({"namespace": names.panel_netns(lab)} if panel.spark_cables(intent)
                      else None),
            "timeserver": {"namespace": timesync.server_namespace(lab),
                           "root_veth": timesync.server_veth(slot),
                           "address": timesync.server_address(slot)},
            "hosts": {h: p.record() for h, p in hosts.items()}}


def up(topology: str, lab: str, progress: Progress = lambda _: None, *,
       sudo_password: bool = False, switch_prepared: bool = False,
       link_training_s: float | None = None, switch_chip: str | None = None) -> LabInfo:
    """Build lab `lab` from `topology`; on any failure everything built so far is removed.

    `sudo_password`: sudo on the Sparks asks for a password (see LabOptions);
    `switch_prepared`: the switch starts prepared rather than factory-default;
    `link_training_s`: default FABRIC_LAB_LINK_TRAINING_S, else 5 s;
    `switch_chip`: the CRS804's chip family (default prestera-dx).
    """
    names.check_lab_name(lab)
    if link_training_s is None:
        link_training_s = default_link_training()
    if not link_training_s >= 0:
        raise InputError(f"link training {link_training_s!r}: give seconds >= 0")
    switch_chip = switch_chip or DEFAULT_CHIP_FAMILY
    families = routeros_properties().families
    if switch_chip not in families:
        raise InputError(f"--switch-chip {switch_chip!r}: give one of {', '.join(families)}")
    options = LabOptions(sudo_password=sudo_password, switch_prepared=switch_prepared,
                         link_training_s=float(link_training_s), switch_chip=switch_chip)
    check_prerequisites()
    source = resolve_topology(topology)
    inventory = default_inventory()
    intent = load_intent(source, inventory)
    with _labs_lock():
        d = registry.lab_dir(lab)
        if d.exists():
            raise InputError(f"lab {lab} already exists; remove it first with "
                             f"`fabric lab down --name {lab}`")
        taken = [int((registry.read_record(n) or {}).get("slot", 0))
                 for n in registry.list_labs()]
        slot = mgmt.free_slot(taken)
        hosts = lab_hosts(lab, intent, slot)
        d.mkdir(mode=0o755)
        created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        labfiles.write_json(d / "lab.json",
                            _record(lab, intent, source, slot, "building", hosts, created,
                                    options))
    progress(f"lab {lab}: {intent.name}, {len(hosts)} hosts, management {mgmt.subnet(slot)}")
    try:
        _build(lab, intent, source, inventory, slot, hosts, d, progress, options)
        labfiles.write_json(d / "lab.json",
                            _record(lab, intent, source, slot, "up", hosts, created, options))
    except BaseException:
        progress(f"lab {lab}: build failed, cleaning up")
        down(lab)
        raise
    return registry.load_lab(lab)


def _build(lab: str, intent: Intent, source: Path, inventory: Path, slot: int,
           hosts: dict[str, LabHost], d: Path, progress: Progress,
           options: LabOptions) -> None:
    for sub in ("ssh", "hosts", "inventory", "logs"):
        (d / sub).mkdir(mode=0o755)
    for h in hosts:
        (d / "hosts" / h).mkdir(mode=0o755)
    with ThreadPoolExecutor(max_workers=max(2, len(hosts) + 1)) as pool:
        keys = {h: pool.submit(sshd.keygen, d / "hosts" / h / "ssh_host_ed25519_key", h)
                for h in hosts}
        client = pool.submit(sshd.keygen, d / "ssh" / "id_ed25519", f"fabric-lab-{lab}")
        _wire(lab, intent, slot, hosts)
        progress(f"namespaces, management bridge {names.bridge(lab)} and "
                 f"{len(intent.links)} cables")
        secrets = labfiles.new_secrets(sudo_password=options.sudo_password)
        _write_files(lab, intent, source, inventory, hosts, d, secrets,
                     {h: f.result() for h, f in keys.items()}, client.result(), options)
        chrony = timesync.binaries()
        assert chrony is not None  # check_prerequisites
        server = timesync.server_address(slot)
        timesync.start_server(lab, slot, d, chrony)
        list(pool.map(lambda h: _start_host(lab, intent, h, d, options, server, chrony),
                      hosts.values()))
        sparks = [h for h in hosts.values() if h.role == "spark"]
        list(pool.map(lambda h: ns.wait_until(
            f"{h.name}: chronyd synchronised to {server}",
            lambda: timesync.synchronised(h.pids["holder"], chrony), timeout=20), sparks))
    progress("sshd, lldpd, chronyd -x" + (" and the RouterOS API" if intent.switch else "")
             + f" running; time server {server}")
    lldp.announce_all({h.name: h.pids["holder"] for h in hosts.values()})
    load_intent(d / "topology.yaml", d / "inventory")  # the lab's own files must load


def _wire(lab: str, intent: Intent, slot: int, hosts: dict[str, LabHost]) -> None:
    has_panel = bool(panel.spark_cables(intent))
    ns.ip_batch([*(f"netns add {h.namespace}" for h in hosts.values()),
                 f"netns add {timesync.server_namespace(lab)}",
                 *([f"netns add {names.panel_netns(lab)}"] if has_panel else [])])
    if has_panel:
        ns.sysctl(names.panel_netns(lab), panel.PANEL_SYSCTLS)
    veths = {h.name: (h.root_veth, h.namespace, h.mgmt_if) for h in hosts.values()}
    ntp_root, ntp_inside = timesync.root_lines(lab, slot)
    ns.ip_batch([*mgmt.root_lines(slot, names.bridge(lab), veths), *ntp_root,
                 *cabling.cable_lines(lab, intent), *panel.root_lines(lab, intent)])
    ns.ip_batch(ntp_inside, timesync.server_namespace(lab))
    if has_panel:
        ns.ip_batch(panel.panel_lines(intent), names.panel_netns(lab))

    def inside(h: LabHost) -> None:
        lines = mgmt.host_lines(h.mgmt_if, mgmt.address(slot, int(h.mgmt_ip.split(".")[-1])))
        if h.role == "switch":
            lines += cabling.switch_lines(intent, h.name)
        elif h.role == "spark":
            spark = intent.hosts[h.name]
            ns.ip_batch(cabling.spark_dark_lines(intent, spark), h.namespace)
            # silence the hidden cable ends while they are still down; let users open ICMP
            # datagram sockets as DGX OS does (systemd's 50-default.conf), so `ping` as
            # dgxadmin uses them and not a raw socket that sees every echo of the namespace
            ns.sysctl(h.namespace, {**cabling.hidden_end_sysctls(cabling.spark_lowers(spark)),
                                    **DGX_OS_SYSCTLS})
            lines += cabling.spark_twin_lines(spark)
        ns.ip_batch(lines, h.namespace)

    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        list(pool.map(inside, hosts.values()))


def _write_files(lab: str, intent: Intent, source: Path, inventory: Path,
                 hosts: dict[str, LabHost], d: Path, secrets: dict[str, str],
                 host_keys: dict[str, str], client_key: str, options: LabOptions) -> None:
    labfiles.write_topology(source, d / "topology.yaml", lab)
    labfiles.write_inventory(inventory, d / "inventory", {h: p.mgmt_ip for h, p in hosts.items()})
    labfiles.write_private(d / "secrets.json", labfiles.json_text(secrets))
    (d / "ssh" / "known_hosts").write_text("".join(
        sshd.known_hosts_line(p.mgmt_ip, host_keys[h]) + "\n" for h, p in hosts.items()))
    (d / "ssh" / "authorized_keys").write_text(client_key + "\n")
    (d / "ssh" / "authorized_keys").chmod(0o644)  # sshd reads it as the (non-root) user
    sparks = [p for p in hosts.values() if p.role == "spark"]
    if sparks:
        password = secrets.get("sudo_password")
        crypted = (ns.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n").strip()
                   if password else None)
        user = hostenv.spark_user(crypted)
        script = hostenv.netplan_script()
        chrony = timesync.binaries()
        for p in sparks:
            hostenv.write_spark_files(d / "hosts" / p.name, user, script)
            if chrony is not None:
                timesync.install_chronyc(d / "hosts" / p.name, chrony)
            hostenv.install_nmcli(d / "hosts" / p.name, sudo_asks=bool(password))
            hostenv.install_docker(d / "hosts" / p.name)
            if intent.lossless:
                hostenv.install_mlnx_qos(d / "hosts" / p.name)
    for h, p in hosts.items():
        hd = d / "hosts" / h
        is_switch = p.role == "switch"
        users = switch.ssh_users(secrets["routeros_user"]) if is_switch else [secrets["ssh_user"]]
        force = switch.shell_command(d / "switch-state.json") if is_switch else None
        (hd / "sshd_config").write_text(sshd.config(
            address=p.mgmt_ip, host_key=hd / "ssh_host_ed25519_key",
            authorized_keys=d / "ssh" / "authorized_keys", users=users, force_command=force,
            passwords=is_switch, path=None if is_switch else hostenv.UBUNTU_PATH))
        (hd / "lldpd.conf").write_text(lldp.config(h))
        if is_switch:
            switch.write_accounts(hd, secrets["routeros_user"], secrets["routeros_password"])
            switch.write_state(d / "switch-state.json", h, cabling.lanes_of(intent, h),
                               secrets["routeros_user"], secrets["routeros_password"],
                               prepared=options.switch_prepared,
                               chip_family=options.switch_chip,
                               mgmt_address=f"{p.mgmt_ip}/{p.mgmt_prefix}")


def _start_host(lab: str, intent: Intent, p: LabHost, d: Path,
                options: LabOptions, timeserver: str, chrony: timesync.Chrony) -> None:
    hd = d / "hosts" / p.name
    logs = d / "logs"
    holder = hostenv.start_holder(p.namespace, p.name, d, hd)
    p.pids["holder"] = holder
    if p.role == "switch":
        p.pids["api"] = switch.start_api(holder, p.name, d / "switch-state.json", p.mgmt_ip,
                                         hd / "api.ready", logs / f"{p.name}.api.log",
                                         training_s=options.link_training_s)
    p.pids["sshd"] = sshd.start(holder, p.name, hd / "sshd_config",
                                logs / f"{p.name}.sshd.log", p.mgmt_ip)
    if p.fabric_ifs:
        p.pids["lldpd"] = lldp.start(holder, p.name, p.fabric_ifs, p.mgmt_ip,
                                     hd / "lldpd.conf", logs / f"{p.name}.lldpd.log")
    if p.role == "spark":
        p.pids["chronyd"] = timesync.start_client(holder, p.name, hd,
                                                  logs / f"{p.name}.chronyd.log", timeserver,
                                                  chrony)
    for daemon, pid in p.pids.items():
        registry.write_pid_file(d, p.name, daemon, pid)


def down(lab: str) -> bool:
    """Remove lab `lab` entirely (processes, namespaces, bridge, veths, state, and the saved
    report `fabric gate` would read); False if absent."""
    d = registry.lab_dir(lab)
    record = registry.read_record(lab)
    if record is None and not d.exists():
        return False
    check_prerequisites()
    hosts: dict[str, Any] = (record or {}).get("hosts", {})
    ntp: dict[str, Any] = (record or {}).get("timeserver") or {}
    namespaces = [h["namespace"] for h in hosts.values()]
    namespaces += [ntp["namespace"]] if ntp.get("namespace") else []
    # the panel is the lab's by its name, also where a build failed before its record said so
    namespaces += [names.panel_netns(lab)] if ns.netns_exists(names.panel_netns(lab)) else []
    inodes = {i for i in (ns.netns_inode(n) for n in namespaces) if i is not None}
    recorded = [pid for h in hosts.values() for pid in h.get("pids", {}).values()]
    ns.kill_all([*ns.pids_in_netns(inodes), *(p for p in recorded if _in(p, inodes))])
    ns.ip_batch((f"netns del {n}" for n in namespaces if ns.netns_exists(n)), force=True)
    if record is not None:
        mgmt.teardown(record.get("bridge", names.bridge(lab)),
                      [h["root_veth"] for h in hosts.values()]
                      + ([ntp["root_veth"]] if ntp.get("root_veth") else []))
    shutil.rmtree(d, ignore_errors=True)
    from fabric.gate import forget_lab

    forget_lab(lab)  # a lab built again under this name starts without a report
    return True


def _in(pid: int, inodes: set[int]) -> bool:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino in inodes
    except OSError:
        return False
