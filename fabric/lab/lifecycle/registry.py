"""Where labs live and what the rest of the toolkit needs to talk to one (`--lab NAME`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric.credentials import Credentials
from fabric.errors import InputError
from fabric.lab import names
from fabric.target import Target

SCHEMA = "fabric.lab/1"


@dataclass(frozen=True)
class LabHost:
    """One host of a lab: its namespace, management address and daemons."""

    name: str
    role: str
    namespace: str
    mgmt_ip: str
    mgmt_if: str
    root_veth: str
    pids: dict[str, int]


@dataclass(frozen=True)
class LabInfo:
    """A built lab, as `--lab NAME` sees it: the files and credentials to reach it."""

    name: str
    dir: Path
    topology: str
    topology_path: Path
    inventory_dir: Path
    known_hosts: Path
    client_key: Path
    ssh_user: str
    routeros_user: str
    routeros_password: str
    mgmt: dict[str, str]
    namespaces: dict[str, str]
    hosts: dict[str, LabHost]
    switch: str | None
    api_port: int
    slot: int
    bridge: str
    created: str
    state: str
    #: the Spark user's password when sudo asks for one (`fabric lab up --sudo-password`)
    sudo_password: str | None = None
    #: how the lab was built (builder.LabOptions as a dict)
    options: dict[str, Any] = field(default_factory=dict)


def lab_dir(name: str) -> Path:
    """The state directory of lab `name` (it may not exist)."""
    return names.LABS_ROOT / names.check_lab_name(name)


def read_record(name: str) -> dict[str, Any] | None:
    """lab.json of `name`, or None when there is no such lab."""
    path = lab_dir(name) / "lab.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data


def load_lab(name: str) -> LabInfo:
    """The lab `name`; InputError (exit 2) when it does not exist or is not up."""
    record = read_record(name)
    if record is None:
        raise InputError(f"no lab named {name}; run `fabric lab up TOPOLOGY --name {name}`"
                         " first (`fabric lab status` lists the labs)")
    d = lab_dir(name)
    try:
        secrets: dict[str, str] = json.loads((d / "secrets.json").read_text())
    except (OSError, ValueError):
        secrets = {}
    hosts = {h: LabHost(name=h, role=v["role"], namespace=v["namespace"], mgmt_ip=v["mgmt_ip"],
                        mgmt_if=v["mgmt_if"], root_veth=v["root_veth"],
                        pids=dict(v.get("pids", {})))
             for h, v in record.get("hosts", {}).items()}
    return LabInfo(
        name=name, dir=d, topology=record.get("topology", ""),
        topology_path=d / "topology.yaml", inventory_dir=d / "inventory",
        known_hosts=d / "ssh" / "known_hosts", client_key=d / "ssh" / "id_ed25519",
        ssh_user=secrets.get("ssh_user", names.SPARK_USER),
        routeros_user=secrets.get("routeros_user", "admin"),
        routeros_password=secrets.get("routeros_password", ""),
        mgmt={h: v.mgmt_ip for h, v in hosts.items()},
        namespaces={h: v.namespace for h, v in hosts.items()},
        hosts=hosts, switch=record.get("switch"), api_port=int(record.get("api_port", 8728)),
        slot=int(record.get("slot", 0)), bridge=record.get("bridge", ""),
        created=record.get("created", ""), state=record.get("state", "unknown"),
        sudo_password=secrets.get("sudo_password"), options=dict(record.get("options", {})))


def list_labs() -> list[str]:
    """Names of the labs that have a state directory with a lab.json."""
    if not names.LABS_ROOT.is_dir():
        return []
    return sorted(p.name for p in names.LABS_ROOT.iterdir() if (p / "lab.json").is_file())


def write_pid_file(lab_directory: Path, host: str, daemon: str, pid: int) -> None:
    """`run/<host>.<daemon>.pid` in the lab directory (lab.json holds the same pids)."""
    run = lab_directory / "run"
    run.mkdir(exist_ok=True)
    (run / f"{host}.{daemon}.pid").write_text(f"{pid}\n")


def set_pid(lab: str, host: str, daemon: str, pid: int) -> None:
    """Record a restarted daemon's pid in lab.json and its pid file."""
    from fabric.lab.host.labfiles import write_json

    record = read_record(lab)
    if record is None:
        return
    record["hosts"][host]["pids"][daemon] = pid
    write_json(lab_dir(lab) / "lab.json", record)
    write_pid_file(lab_dir(lab), host, daemon, pid)


def lab_target(name: str) -> Target:
    """`--lab NAME`: the lab's own topology copy, inventory and credentials."""
    from fabric.intent.build import load_intent

    info = load_lab(name)
    creds = Credentials(ssh_user=info.ssh_user, ssh_key=info.client_key,
                        known_hosts=info.known_hosts, strict_host_keys=True,
                        routeros_user=info.routeros_user,
                        routeros_password=info.routeros_password)
    return Target(load_intent(info.topology_path, info.inventory_dir), info.inventory_dir,
                  creds, lab=name)
