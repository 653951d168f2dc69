"""Lab end-to-end fixtures: one lab per topology per session, built once, torn down at the end.

These tests need root and the lab's tools. They are never skipped: without them they fail
with a message that says what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric.lab import builder, registry
from fabric.lab.registry import LabInfo

pytestmark = pytest.mark.lab

#: Seconds a switch lane trains after a speed/FEC/autoneg change in the test labs (5 s by
#: default): small so tests that wait for carrier stay quick, not zero so they must poll.
#: Passed explicitly: tests/conftest.py clears FABRIC_* (FABRIC_LAB_LINK_TRAINING_S too).
LINK_TRAINING_S = 0.5


@pytest.fixture(scope="session", autouse=True)
def _lab_prerequisites() -> None:
    if os.geteuid() != 0:
        pytest.fail("tests/lab need root (network namespaces, mounts, sshd): run them as root",
                    pytrace=False)
    missing = [t for t in (*builder.TOOLS, "ssh") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"tests/lab need {', '.join(missing)}: run `make apt`", pytrace=False)


def build(topology: str, name: str, **options: Any) -> LabInfo:
    """A fresh lab; `options` are builder.up's (sudo_password, switch_prepared,
    link_training_s)."""
    builder.down(name)  # a lab left by an interrupted run
    options.setdefault("link_training_s", LINK_TRAINING_S)
    return builder.up(topology, name, **options)


#: lab_factory(topology, name, **options): the lab, built once per name in the session.
LabFactory = Callable[..., LabInfo]


@pytest.fixture(scope="session")
def lab_factory() -> Iterator[LabFactory]:
    """Build a lab once per (topology, name) in the session; all are removed at the end."""
    built: dict[str, LabInfo] = {}

    def get(topology: str, name: str, **options: Any) -> LabInfo:
        if name not in built:
            built[name] = build(topology, name, **options)
        return built[name]

    yield get
    for name in built:
        builder.down(name)


@pytest.fixture(scope="session")
def ring4(lab_factory: LabFactory) -> LabInfo:
    """ring4 (a DAC ring, no switch: switch_prepared only keeps the options alike)."""
    return lab_factory("ring4", "t-ring4", switch_prepared=True)


@pytest.fixture(scope="session")
def star4(lab_factory: LabFactory) -> LabInfo:
    """star4 with a switch already prepared (management address on ether1), as the README
    tells an admin to do before the first push."""
    return lab_factory("star4", "t-star4", switch_prepared=True)


def in_host(info: LabInfo, host: str, *argv: str, check: bool = True) -> str:
    """Run a command inside a lab host (network, mounts, hostname) and return its stdout."""
    holder = registry.load_lab(info.name).hosts[host].pids["holder"]
    proc = subprocess.run(["nsenter", "-t", str(holder), "-m", "-u", "-n", "--", *argv],
                          capture_output=True, text=True, timeout=30, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{host}: {' '.join(argv)}: {proc.stderr}")
    return proc.stdout


def ssh(info: LabInfo, host: str, command: str, *, user: str | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command` on a lab host over the OpenSSH client as the lab's Spark user (the lab
    key, host key verified); the finished process, stdout and stderr apart."""
    argv = ["ssh", "-i", str(info.client_key), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-o", f"UserKnownHostsFile={info.known_hosts}", "-o", "StrictHostKeyChecking=yes",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
            "-l", user or info.ssh_user, info.mgmt[host], command]
    return subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60,
                          check=False)


def ssh_ok(info: LabInfo, host: str, command: str, input: str | None = None) -> str:
    """`ssh` that must succeed; its stdout."""
    proc = ssh(info, host, command, input=input)
    if proc.returncode != 0:
        raise AssertionError(f"{host}: {command}: exit {proc.returncode}: {proc.stderr}")
    return proc.stdout


def ip_links(info: LabInfo, host: str) -> dict[str, dict[str, Any]]:
    data = json.loads(in_host(info, host, "ip", "-j", "-d", "addr", "show"))
    return {d["ifname"]: d for d in data}


def lldp_neighbors(info: LabInfo, host: str) -> set[tuple[str, str, str]]:
    """(local interface, neighbour system name, neighbour port id) as lldpd reports them."""
    data = json.loads(in_host(info, host, "lldpcli", "-f", "json0", "show", "neighbors"))
    out: set[tuple[str, str, str]] = set()
    for iface in data.get("lldp", [{}])[0].get("interface", []):
        chassis = iface["chassis"][0]
        name = chassis["name"][0]["value"]
        port = iface["port"][0]["id"][0]["value"]
        out.add((iface["name"], name, port))
    return out


def eventually(check: Callable[[], bool], timeout: float = 25.0) -> bool:
    """Poll a condition (LLDP needs a frame to arrive); True as soon as it holds. The ceiling
    covers two lldpd tx-intervals, for a loaded machine; a healthy lab answers at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def netmiko_linux(info: LabInfo, host: str, known_hosts: Path | None = None) -> Any:
    from netmiko import ConnectHandler

    return ConnectHandler(device_type="linux", host=info.mgmt[host], username=info.ssh_user,
                          use_keys=True, key_file=str(info.client_key), ssh_strict=True,
                          system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(known_hosts or info.known_hosts), allow_agent=False,
                          conn_timeout=10)
