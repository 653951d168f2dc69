"""A lab that exists only on paper, and a kernel that records what it is told.

`paper_lab` builds the lab record of a topology (namespaces `fl-t-HOST`, no processes) and
its intent, without root; `FakeKernel` stands in for `fabric.lab.ns`'s process calls (and
for sshd, chrony and the RouterOS API), answers the reads a fault makes from a small state
and records every command, so a test can say which commands a fault runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.lab import ns
from fabric.lab.host import sshd, timesync
from fabric.lab.lifecycle import registry
from fabric.lab.lifecycle.registry import LabHost, LabInfo
from tests.conftest import INVENTORY, TOPOLOGIES

LAB = "t-faults-paper"


def paper_lab(topology: str, lab_dir: Path) -> tuple[LabInfo, Intent]:
    """Lab `LAB` built from `topologies/TOPOLOGY.yaml`, its directory `lab_dir`."""
    path = TOPOLOGIES / f"{topology}.yaml"
    intent = load_intent(path, INVENTORY)
    hosts = {name: LabHost(name, h.role, f"fl-t-{name}", f"10.99.0.{i + 2}", "mgmt0",
                           f"fl-t-m{i}", {"holder": 1000 + i, "sshd": 2000 + i})
             for i, (name, h) in enumerate((n, intent.hosts[n]) for n in intent.cabled)}
    switch = intent.switch.host if intent.switch else None
    info = LabInfo(
        name=LAB, dir=lab_dir, topology=topology, topology_path=path, inventory_dir=INVENTORY,
        known_hosts=lab_dir / "known_hosts", client_key=lab_dir / "id", ssh_user="fabric",
        routeros_user="admin", routeros_password="pw",
        mgmt={n: h.mgmt_ip for n, h in hosts.items()},
        namespaces={n: h.namespace for n, h in hosts.items()}, hosts=hosts, switch=switch,
        api_port=8728, slot=7, bridge="fl-t-br", created="now", state="up")
    return info, intent


@dataclass
class FakeKernel:
    """What the kernel holds (per netdev: `ip -j link` rows, IPv4 addresses, qdiscs) and
    every command it was given, in order, as (argv..., input) tuples."""

    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    addrs: dict[str, list[str]] = field(default_factory=dict)
    qdiscs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    routes: list[dict[str, Any]] = field(default_factory=list)
    sysctls: dict[str, str] = field(default_factory=dict)
    filters: str = ""
    calls: list[list[str]] = field(default_factory=list)
    next_pid: int = 4242

    def run(self, argv: Sequence[str], *, input: str | None = None, check: bool = True,
            timeout: float = 30.0) -> str:
        self.calls.append([*argv, *([f"<<{input}"] if input is not None else [])])
        words = list(argv)
        dev = words[words.index("dev") + 1] if "dev" in words else ""
        if "link" in words and "show" in words:
            return json.dumps([self.links.get(dev, {"ifname": dev, "mtu": 9000,
                                                    "flags": ["UP", "LOWER_UP"],
                                                    "address": "02:00:00:00:00:01"})])
        if "addr" in words and "show" in words:
            return json.dumps([{"addr_info": [{"local": a.split("/")[0],
                                               "prefixlen": int(a.split("/")[1])}
                                              for a in self.addrs.get(dev, [])]}])
        if "qdisc" in words and "show" in words:
            return json.dumps(self.qdiscs.get(dev, []))
        if "route" in words and "show" in words:
            return json.dumps(self.routes)
        if "filter" in words and "show" in words:
            return self.filters
        if words[0] == "nsenter" and "-w" not in words:
            return "".join(f"{k} = {self.sysctls[k]}\n" for k in words[3:] if k in self.sysctls)
        return ""

    def spawn(self, argv: Sequence[str], log: Path, env: dict[str, str] | None = None) -> int:
        self.calls.append(["<spawn>", *argv])
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("0.000 down #1\n")
        self.next_pid += 1
        return self.next_pid

    def record(self, what: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> int:
            self.calls.append([f"<{what}>", *map(str, args),
                               *(f"{k}={v}" for k, v in sorted(kwargs.items()))])
            self.next_pid += 1
            return self.next_pid
        return call


class FakeApi:
    """The RouterOS API pool of a switch whose lanes are forced to 200G and train at once."""

    def __init__(self, kernel: FakeKernel) -> None:
        self.kernel = kernel

    def get_api(self) -> FakeApi:
        return self

    def get_resource(self, menu: str) -> FakeApi:
        return self

    def get(self, name: str) -> list[dict[str, str]]:
        return [{"id": "*1", "name": name, "auto-negotiation": "false", "speed": "200G-baseCR4"}]

    def set(self, **values: str) -> None:
        self.kernel.calls.append(["<api set>", *(f"{k}={v}" for k, v in sorted(values.items()))])

    def call(self, command: str, args: dict[str, str]) -> list[dict[str, str]]:
        return [{"status": "link-ok"}]

    def disconnect(self) -> None:
        pass


def install(monkeypatch: pytest.MonkeyPatch, kernel: FakeKernel, lab_dir: Path) -> None:
    """Route `fabric.lab.ns`'s process calls, sshd, chrony, the API and the lab's
    directory to `kernel` and `lab_dir`."""
    import routeros_api

    monkeypatch.setattr(ns, "run", kernel.run)
    monkeypatch.setattr(ns, "spawn", kernel.spawn)
    monkeypatch.setattr(ns, "kill_all", kernel.record("kill"))
    monkeypatch.setattr(ns, "alive", lambda pid: True)
    monkeypatch.setattr(ns, "exited_with", lambda pid, log: None)
    monkeypatch.setattr(ns, "wait_until", lambda what, ready, timeout=20.0, failed=None: None)
    monkeypatch.setattr(registry, "lab_dir", lambda name: lab_dir)
    monkeypatch.setattr(registry, "set_pid", kernel.record("set_pid"))
    monkeypatch.setattr(sshd, "start", kernel.record("sshd"))
    monkeypatch.setattr(timesync, "binaries", lambda: "chrony")
    monkeypatch.setattr(timesync, "start_client", kernel.record("chronyd"))
    monkeypatch.setattr(timesync, "synchronised", lambda holder, chrony: True)
    monkeypatch.setattr(routeros_api, "RouterOsApiPool", lambda *a, **k: FakeApi(kernel))
    monkeypatch.setattr("sys.executable", "/usr/bin/python3")
