"""The lab's CRS804: the RouterOS API emulator on port 8728 and an SSH CLI for Netmiko.

Netmiko's `mikrotik_routeros` logs in as `USER+ct511w4098h`, so the switch's private /etc
(see hostenv) gets uid-0 aliases `USER` and `USER+ct511w4098h` whose sshd ForceCommand is the
emulator's shell; they accept the lab client key or the lab's RouterOS password.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from fabric.lab import ns

API_PORT = 8728
NETMIKO_SUFFIX = "+ct511w4098h"
#: What a veth moves, the "cable speed" the emulator scales its shaping against.
LINE_RATE_MBIT = 10000
#: Seconds a 200G PAM4 lane needs to train after a speed, FEC or auto-negotiation change.
DEFAULT_TRAINING_S = 5.0


def ssh_users(routeros_user: str) -> list[str]:
    return [routeros_user, routeros_user + NETMIKO_SUFFIX]


def write_accounts(hostdir: Path, routeros_user: str, password: str) -> None:
    """passwd/shadow lines the holder appends to the switch's private /etc copy."""
    crypted = ns.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n").strip()
    passwd = "".join(f"{u}:x:0:0:RouterOS {routeros_user}:/root:/bin/sh\n"
                     for u in ssh_users(routeros_user))
    shadow = "".join(f"{u}:{crypted}:20000:0:99999:7:::\n" for u in ssh_users(routeros_user))
    (hostdir / "passwd.add").write_text(passwd)
    shadow_file = hostdir / "shadow.add"
    shadow_file.write_text(shadow)
    shadow_file.chmod(0o600)


def shell_command(state: Path) -> str:
    """sshd ForceCommand: the emulator's RouterOS terminal on the shared state file."""
    return shlex.join([sys.executable, "-m", "fabric.lab.routeros", "shell",
                       "--state", str(state)])


def write_state(state: Path, identity: str, lanes: dict[str, int], username: str,
                password: str, *, prepared: bool = False, mgmt_address: str | None = None,
                chip_family: str | None = None) -> None:
    """The switch's first configuration. Factory (the default): one `bridge` holding ether1 and
    every lane, `mgmt_address` (e.g. "198.18.3.10/24") on `bridge`. `prepared`: as after the
    README's preparation steps, ether1 out of the bridge and the address on ether1. Without
    `mgmt_address`, `/ip/address` is empty. Only the emulated view moves: the kernel address
    stays on the lab's management netdev ether1, which is never enslaved. `chip_family`: which
    QoS properties the menus have (default prestera-dx)."""
    from fabric.lab.routeros.platform import DEFAULT_CHIP_FAMILY
    from fabric.lab.routeros.state import FACTORY, PREPARED, write_initial_state

    write_initial_state(state, identity=identity, lanes=lanes, username=username,
                        password=password, config=PREPARED if prepared else FACTORY,
                        mgmt_address=mgmt_address,
                        chip_family=chip_family or DEFAULT_CHIP_FAMILY)


def start_api(holder_pid: int, host: str, state: Path, address: str, ready: Path,
              log: Path, training_s: float = DEFAULT_TRAINING_S) -> int:
    """Start the API emulator inside the switch and wait for its ready file; its pid.
    `training_s`: how long a lane stays at no-link after a speed, FEC or autoneg change."""
    ready.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "fabric.lab.routeros", "serve", "--state", str(state),
            "--listen", f"{address}:{API_PORT}", "--line-rate-mbit", str(LINE_RATE_MBIT),
            "--training-s", repr(float(training_s)), "--ready-file", str(ready)]
    pid = ns.spawn(ns.in_host(holder_pid, argv), log)
    ns.wait_until(f"{host}: RouterOS API on {address}:{API_PORT}",
                  lambda: ready.exists() and ns.port_open(address, API_PORT), timeout=20,
                  failed=lambda: ns.exited_with(pid, log))
    return pid
