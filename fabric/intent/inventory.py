"""Read the Nornir SimpleInventory files into intent Host records (with file/line for errors)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabric.errors import InputError, InputProblem
from fabric.intent.model import Host, Twin
from fabric.intent.schema import HostData, HostSpec
from fabric.intent.yamlsource import SourceDoc, load_yaml, validate

SECRET_FIELDS = ("password", "secret")


@dataclass(frozen=True)
class Inventory:
    """The hosts of an inventory directory, and where each is declared."""

    directory: Path
    hosts: dict[str, Host]
    where: dict[str, InputProblem]  # host -> location of its declaration (message unused)


def _doc(directory: Path, name: str) -> SourceDoc:
    path = directory / name
    if not path.exists():
        if name == "hosts.yaml":
            raise InputError(InputProblem(str(path), None, "", "inventory has no hosts.yaml"))
        return SourceDoc(str(path), {}, {(): 1})
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise InputError(doc.problem((), "expected a mapping of names to entries"))
    return doc


def _reject_secrets(doc: SourceDoc, path: tuple[str | int, ...], entry: dict[str, Any]) -> None:
    for key in SECRET_FIELDS:
        if key in entry:
            raise InputError(doc.problem((*path, key),
                             "secrets do not belong in inventory files; set them in the "
                             "environment (see README, Credentials)"))


def load_inventory(directory: Path) -> Inventory:
    """Load hosts.yaml/groups.yaml/defaults.yaml; merge group data into each host."""
    hosts_doc = _doc(directory, "hosts.yaml")
    groups_doc = _doc(directory, "groups.yaml")
    defaults_doc = _doc(directory, "defaults.yaml")
    _reject_secrets(defaults_doc, (), defaults_doc.data)
    defaults = validate(defaults_doc, HostSpec)
    groups: dict[str, HostSpec] = {}
    for name, entry in groups_doc.data.items():
        _reject_secrets(groups_doc, (name,), entry or {})
        groups[name] = validate(groups_doc, HostSpec, entry or {}, prefix=(name,))
    hosts: dict[str, Host] = {}
    where: dict[str, InputProblem] = {}
    problems: list[InputProblem] = []
    for name, entry in hosts_doc.data.items():
        _reject_secrets(hosts_doc, (name,), entry or {})
        spec = validate(hosts_doc, HostSpec, entry or {}, prefix=(name,))
        chain = [defaults]
        for g in spec.groups:
            if g not in groups:
                problems.append(hosts_doc.problem((name, "groups"), f"unknown group {g!r}"))
                continue
            chain.append(groups[g])
        chain.append(spec)
        data: dict[str, Any] = {}
        platform = None
        for layer in chain:
            data.update(layer.data)
            platform = layer.platform or platform
        hd = validate(hosts_doc, HostData, data, prefix=(name, "data"))
        ports = {p: tuple(Twin(t.netdev, t.rdma) for t in twins)
                 for p, twins in (hd.ports or {}).items()}
        hosts[name] = Host(name=name, role=hd.role, hostname=spec.hostname, platform=platform,
                           status=hd.status, ups=hd.ups, node_id=hd.node_id,
                           mgmt_interface=hd.mgmt_interface, model=hd.model, ports=ports)
        where[name] = hosts_doc.problem((name,), "")
    if problems:
        raise InputError(problems)
    return Inventory(directory, hosts, where)
