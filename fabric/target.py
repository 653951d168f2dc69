"""What a command works on: `--lab NAME`, or `-i INVENTORY -t TOPOLOGY`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabric.credentials import Credentials, from_environment
from fabric.errors import InputError

if TYPE_CHECKING:
    from fabric.intent.model import Intent

LabOpt = typer.Option(None, "--lab", help="Work on lab NAME (its inventory and topology).")
InventoryOpt = typer.Option(None, "--inventory", "-i", help="Nornir inventory directory.")
TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology name or file.")


@dataclass(frozen=True)
class Target:
    """The intent plus where and how to reach its hosts."""

    intent: Intent
    inventory_dir: Path
    credentials: Credentials
    lab: str | None = None


def resolve_target(lab: str | None, inventory: Path | None, topology: str | None) -> Target:
    """Resolve the common `--lab` / `-i` / `-t` options into a Target."""
    from fabric.intent.build import load_intent
    from fabric.intent.locate import default_inventory

    if lab is not None:
        if inventory is not None or topology is not None:
            raise InputError("--lab already names an inventory and a topology; "
                             "drop -i/-t or drop --lab")
        from fabric.lab.registry import load_lab

        info = load_lab(lab)
        creds = Credentials(ssh_user=info.ssh_user, ssh_key=info.client_key,
                            known_hosts=info.known_hosts, strict_host_keys=True,
                            routeros_user=info.routeros_user,
                            routeros_password=info.routeros_password)
        intent = load_intent(info.topology_path, info.inventory_dir)
        return Target(intent, info.inventory_dir, creds, lab=lab)
    if topology is None:
        raise InputError("name a topology with -t TOPOLOGY (or use --lab NAME)")
    inv = inventory or default_inventory()
    return Target(load_intent(topology, inv), inv, from_environment())
