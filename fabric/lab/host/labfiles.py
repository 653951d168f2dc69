"""The files a lab hands to the rest of the toolkit: topology copy, inventory, secrets."""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
from pathlib import Path
from typing import Any

import yaml

from fabric.lab.names import SPARK_USER

LAB_PROFILE = "veth"
LAB_RAILS = ["198.19.0.0/24", "198.19.1.0/24"]
LAB_DIRECT = "198.19.128.0/17"
LAB_DIRECT_PREFIX = 24
#: Per-link `subnets:` overrides are renumbered from here, one /24 each.
LAB_LINK_SUBNETS = ipaddress.IPv4Network("198.19.2.0/24")


def lab_topology(source: Path) -> dict[str, Any]:
    """The topology with `profile: veth` and its addressing moved into 198.19.0.0/16."""
    data: dict[str, Any] = yaml.safe_load(source.read_text())
    data["profile"] = LAB_PROFILE
    addressing = dict(data.get("addressing") or {})
    if "rails" in addressing:
        addressing["rails"] = list(LAB_RAILS)
    if "direct" in addressing:
        addressing["direct"] = LAB_DIRECT
        addressing["direct_prefix"] = LAB_DIRECT_PREFIX
    data["addressing"] = addressing
    base = int(LAB_LINK_SUBNETS.network_address)
    n = 0
    for link in data.get("links") or []:
        if isinstance(link, dict) and link.get("subnets"):
            link["subnets"] = [str(ipaddress.IPv4Network((base + 256 * (n + i), 24)))
                               for i in range(len(link["subnets"]))]
            n += len(link["subnets"])
    return data


def write_topology(source: Path, target: Path, lab: str) -> None:
    body = yaml.safe_dump(lab_topology(source), sort_keys=False, default_flow_style=None)
    target.write_text(f"# Lab {lab}: {source.name} with the veth profile and lab addressing.\n"
                      f"# Written by `fabric lab up`; do not edit.\n{body}")


def write_inventory(source: Path, target: Path, mgmt: dict[str, str]) -> None:
    """A SimpleInventory of the lab's hosts only; `hostname` = the lab management address."""
    target.mkdir(parents=True, exist_ok=True)
    hosts = yaml.safe_load((source / "hosts.yaml").read_text()) or {}
    lab_hosts = {}
    for name, entry in hosts.items():
        if name in mgmt:
            entry = dict(entry or {})
            entry["hostname"] = mgmt[name]
            lab_hosts[name] = entry
    (target / "hosts.yaml").write_text(yaml.safe_dump(lab_hosts, sort_keys=False))
    for name in ("groups.yaml", "defaults.yaml"):
        src = source / name
        text = src.read_text() if src.exists() else "{}\n"
        (target / name).write_text(text)


def new_secrets(ssh_user: str = SPARK_USER, routeros_user: str = "admin", *,
                sudo_password: bool = False) -> dict[str, str]:
    """The lab's credentials (secrets.json, 0600); `sudo_password`: the Spark user gets a
    random password that sudo asks for (else sudo needs none)."""
    out = {"ssh_user": ssh_user, "routeros_user": routeros_user,
           "routeros_password": secrets.token_urlsafe(18)}
    if sudo_password:
        out["sudo_password"] = secrets.token_urlsafe(18)
    return out


def write_private(path: Path, text: str) -> None:
    """Write a file only root can read (created 0600, never world-readable in between)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    path.chmod(0o600)


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
