"""What `fabric lab status` shows: every lab, its hosts and whether their daemons live."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.lab import ns
from fabric.lab.lifecycle import registry


@dataclass(frozen=True)
class HostStatus:
    name: str
    namespace: str
    netns_ok: bool
    mgmt_ip: str
    processes: dict[str, bool]


@dataclass(frozen=True)
class LabStatus:
    name: str
    topology: str
    state: str
    created: str
    hosts: tuple[HostStatus, ...]
    faults: tuple[str, ...]


def lab_status() -> list[LabStatus]:
    out: list[LabStatus] = []
    for name in registry.list_labs():
        info = registry.load_lab(name)
        hosts = tuple(HostStatus(h.name, h.namespace, ns.netns_exists(h.namespace), h.mgmt_ip,
                                 {k: ns.alive(pid) for k, pid in sorted(h.pids.items())})
                      for h in info.hosts.values())
        from fabric.lab.faults import active_faults

        faults = tuple(f"{f.kind} {f.target}" for f in active_faults(name))
        out.append(LabStatus(name, info.topology, info.state, info.created, hosts, faults))
    return out
