"""`netplan apply` inside a lab Spark: the real `netplan generate`, then its output applied.

A network namespace has no systemd and no udev, so the real `netplan apply` (systemctl,
udevadm, a restart of networkd or NetworkManager) cannot work there. `fabric lab up` therefore
bind-mounts a small wrapper (`wrapper_text`) over the netplan executable in each Spark's mount
namespace. The wrapper hands every subcommand to the real netplan (kept reachable at
`REAL_NETPLAN`) except `apply`, which runs this file with the lab's Python:

1. the real `netplan generate` (its messages pass through; a failure exits 78 like the real
   `netplan apply`, which exits EX_CONFIG when the generator fails);
2. the generated networkd files (/run/systemd/network/*netplan-*.network: [Match] Name,
   [Link] MTUBytes, Address=) and NetworkManager keyfiles
   (/run/NetworkManager/system-connections/netplan-*.nmconnection: interface-name, mtu,
   ipv4 addressN) are read, and each named device gets exactly that MTU and those IPv4
   addresses and is brought up, as networkd or NetworkManager would do;
3. a device configured at the previous apply (STATE_FILE, in the host's private /run) that
   netplan no longer names is deconfigured: IPv4 addresses flushed, MTU and up/down state back
   to what they were before this file first touched it.

Devices rendered for NetworkManager come back as on a real host, later: the real `netplan apply`
disconnects every device a netplan-* connection names, stops NetworkManager, flushes those
devices' addresses and starts NetworkManager again without waiting for it
(`systemctl --no-block`), which then activates each connection once its device has carrier. So
the shim flushes those devices' IPv4 addresses and returns; a detached activator
(`activate`, replacing any earlier one) waits `NM_START_S`, then per device brings it up, waits
for carrier (at most `NM_CARRIER_WAIT_S`) and sets its MTU and addresses. A caller that judges
the addresses the moment `netplan apply` returns sees none, as on a Spark.

Devices netplan does not name are never touched, nor the lab's hidden cable ends (`cx7-*`).
What the lab does not emulate (DHCP, routes, virtual devices) is said on stderr; a device
change that the kernel refuses is a warning and the exit stays 0, as networkd and
NetworkManager only log such failures. Standard library only: it runs as a script.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

#: Where the lab keeps the real netplan executable reachable (a bind mount in the host's /run).
REAL_DIR = "/run/fabric-lab/netplan"
#: What the shim remembers between applies (the host's private /run).
STATE_FILE = Path("/run/fabric-lab/netplan-shim.json")
NETWORKD_DIR = Path("/run/systemd/network")
NM_DIR = Path("/run/NetworkManager/system-connections")
#: The detached NetworkManager stand-in's pid and its work (the host's private /run).
ACTIVATOR_PID = Path("/run/fabric-lab/nm-activator.pid")
#: How long NetworkManager takes to start again after `netplan apply` stopped it, and how long
#: the stand-in waits for a device's carrier before it gives up on it.
NM_START_S = 1.0
NM_CARRIER_WAIT_S = 3600.0  # NetworkManager waits for ever; `fabric lab down` ends it anyway
NM_POLL_S = 0.1
#: The lab's hidden cable ends (fabric.lab.names.lower): never a Spark device.
HIDDEN_PREFIX = "cx7-"
#: `netplan apply` exits with EX_CONFIG when `netplan generate` fails.
EX_CONFIG = 78
#: DGX OS's netplan file: NetworkManager manages every device.
BASE_NAME = "01-network-manager-all.yaml"
BASE_TEXT = ("# Let NetworkManager manage all devices on this system\n"
             "network:\n  version: 2\n  renderer: NetworkManager\n")

WRAPPER = """{shebang}
# netplan in a fabric lab host, bind-mounted over {script} by `fabric lab up`.
# Every subcommand runs the real netplan (kept at {real}) except `apply`: it needs
# systemd and udev, which a network namespace does not have, so the lab runs the real
# `netplan generate` and applies what it generated with `ip` (fabric/lab/host/netplan_shim.py).
import os
import runpy
import sys

# (as a normal user the real `netplan apply` fails at once, like on a Spark: it cannot read
# /etc/netplan nor write /run)
if os.geteuid() == 0 and next((a for a in sys.argv[1:] if a[:1] != "-"), None) == "apply":
    os.execv({python!r}, [{python!r}, "-I", {shim!r}, "--netplan", sys.argv[0],
                          *sys.argv[1:]])
sys.path[0] = {script_dir!r}
runpy.run_path({real!r}, run_name="__main__")
"""


def wrapper_text(script: str, shebang: str, python: str, shim: str) -> str:
    """The wrapper that stands in for the netplan script `script` inside a lab host."""
    return WRAPPER.format(shebang=shebang, script=script, real=real_path(script),
                          python=python, shim=shim, script_dir=os.path.dirname(script))


def real_path(script: str) -> str:
    """Where the real netplan script stays reachable inside a lab host."""
    return f"{REAL_DIR}/{os.path.basename(script)}"


def _sibling(name: str) -> ModuleType:
    """A module beside this file, loaded by path: when this file runs as a script (`python -I`:
    no package, and no script directory on sys.path)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# The readers of netplan's generated files (fabric/lab/host/netplan_files.py).
if TYPE_CHECKING or __package__:
    from .netplan_files import Link, Wanted, parse_ini, read_networkd, read_networkmanager
else:
    _files = _sibling("netplan_files")
    Link, Wanted, parse_ini = _files.Link, _files.Wanted, _files.parse_ini
    read_networkd, read_networkmanager = _files.read_networkd, _files.read_networkmanager

#: {"original": {dev: {"mtu": int, "up": bool}}, "configured": {dev: source file}}
State = dict[str, dict[str, Any]]


class ShimError(Exception):
    """A generated file the lab cannot read or a device command that could not run."""


def current_links() -> dict[str, Link]:
    data = json.loads(_ip(["-j", "addr", "show"]) or "[]")
    return {d["ifname"]: Link(name=d["ifname"], mtu=int(d["mtu"]),
                              mac=str(d.get("address", "")).lower(),
                              up="UP" in d.get("flags", []),
                              ipv4=[f"{a['local']}/{a['prefixlen']}"
                                    for a in d.get("addr_info", []) if a["family"] == "inet"])
            for d in data}


def _ip(args: Sequence[str], stdin: str | None = None) -> str:
    proc = subprocess.run(["ip", *args], input=stdin, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0 and stdin is None:
        raise ShimError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    if proc.returncode != 0:
        for line in proc.stderr.strip().splitlines():
            print(f"netplan apply (lab): {line}", file=sys.stderr)
    return proc.stdout


def load_state(path: Path) -> State:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {"original": {}, "configured": {}}
    return {"original": dict(data.get("original", {})),
            "configured": dict(data.get("configured", {}))}


def save_state(path: Path, state: State) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def plan(wanted: Sequence[Wanted], links: dict[str, Link],
         state: State) -> list[str]:
    """`ip -batch` lines that make the devices match `wanted` and undo what is no longer
    wanted; `state` is updated in place."""
    original = state["original"]
    lines: list[str] = []
    chosen: dict[str, Wanted] = {}
    for w in wanted:
        if w.device.startswith(HIDDEN_PREFIX):
            print(f"netplan apply (lab): {w.device} is the lab's hidden cable end, not a Spark "
                  "device; left alone", file=sys.stderr)
            continue
        chosen.setdefault(w.device, w)  # networkd: the first file in lexical order wins
    for dev, w in chosen.items():
        for note in w.notes:
            print(f"netplan apply (lab): {dev}: {note}", file=sys.stderr)
        link = links.get(dev)
        if link is None:
            continue  # configured once it exists; the lab never creates devices
        if dev not in original:
            original[dev] = {"mtu": link.mtu, "up": link.up}
        before = original[dev]
        mtu = w.mtu if w.mtu is not None else int(before["mtu"])
        if link.mtu != mtu:
            lines.append(f"link set dev {dev} mtu {mtu}")
        lines += [f"addr del {a} dev {dev}" for a in link.ipv4 if a not in w.addresses]
        lines += [f"addr add {a} dev {dev}" for a in w.addresses if a not in link.ipv4]
        if not link.up:
            lines.append(f"link set dev {dev} up")
    for dev in sorted(set(state["configured"]) - set(chosen)):
        link = links.get(dev)
        before = original.pop(dev, None)
        if link is None:
            continue
        lines += [f"addr del {a} dev {dev}" for a in link.ipv4]
        if before is not None:
            if link.mtu != int(before["mtu"]):
                lines.append(f"link set dev {dev} mtu {int(before['mtu'])}")
            if link.up != bool(before["up"]):
                lines.append(f"link set dev {dev} {'up' if before['up'] else 'down'}")
    state["configured"] = {dev: w.source for dev, w in chosen.items()}
    return lines


def _device(line: str) -> str:
    """The device an `ip -batch` line of `plan` acts on (the word after `dev`)."""
    words = line.split()
    return words[words.index("dev") + 1]


def activation(nm_wanted: Sequence[Wanted], links: dict[str, Link],
               lines: Sequence[str]) -> dict[str, list[str]]:
    """Per device NetworkManager activates: the `ip -batch` lines it runs once the device has
    carrier (its MTU from `lines`, every address it wants, then up)."""
    out: dict[str, list[str]] = {}
    for w in nm_wanted:
        if w.device not in links or w.device in out or w.device.startswith(HIDDEN_PREFIX):
            continue
        mtu = [ln for ln in lines if _device(ln) == w.device and " mtu " in ln]
        out[w.device] = [*mtu, *(f"addr add {a} dev {w.device}" for a in w.addresses)]
    return out


def apply(state_file: Path = STATE_FILE, networkd: Path = NETWORKD_DIR,
          nm: Path = NM_DIR, activator: Path = ACTIVATOR_PID) -> None:
    _stop_activator(activator)  # NetworkManager stops first, then the devices are read
    links = current_links()
    nm_wanted = read_networkmanager(nm, links)
    wanted = [*read_networkd(networkd, links), *nm_wanted]
    state = load_state(state_file)
    lines = plan(wanted, links, state)
    later = activation(nm_wanted, links, lines)
    now = [ln for ln in lines if _device(ln) not in later]
    now += [f"addr del {a} dev {dev}" for dev in later for a in links[dev].ipv4]
    if now:
        _ip(["-force", "-batch", "-"], stdin="".join(f"{line}\n" for line in now))
    save_state(state_file, state)
    if later:
        _start_activator(activator, later)


def _is_activator(pid: int) -> bool:
    """Whether process `pid` is an activator of this shim in this host's network namespace (a
    pid file can outlive its process, and the pid be reused by another one)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        same_host = os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
    except OSError:
        return False
    return same_host and os.path.abspath(__file__).encode() in argv and b"activate" in argv


def _stop_activator(pid_file: Path, wait_s: float = 5.0) -> None:
    """End an activator an earlier apply started (NetworkManager is stopped again): its whole
    session, an `ip` it runs included, and wait until it is gone, so nothing it would still
    write can land after this apply has read the devices."""
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        pid = 0
    if pid > 0 and _is_activator(pid):
        with contextlib.suppress(OSError):  # it ended meanwhile
            os.killpg(pid, 15)
        deadline = time.monotonic() + wait_s
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.01)
    pid_file.unlink(missing_ok=True)


def _start_activator(pid_file: Path, later: dict[str, list[str]]) -> None:
    """The NetworkManager stand-in, detached from the caller's session (it outlives the SSH
    command that ran `netplan apply`)."""
    proc = subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), "--netplan", "-",
                             "activate", json.dumps(later)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    pid_file.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    pid_file.write_text(f"{proc.pid}\n")


def _carrier(dev: str) -> bool:
    try:
        return Path(f"/sys/class/net/{dev}/carrier").read_text().strip() == "1"
    except OSError:
        return False


def activate(later: dict[str, list[str]]) -> None:
    """NetworkManager starting: after `NM_START_S`, bring each device up and, once it has
    carrier, set its MTU and addresses (a device without carrier by `NM_CARRIER_WAIT_S`
    stays without them)."""
    time.sleep(NM_START_S)
    _ip(["-force", "-batch", "-"], stdin="".join(f"link set dev {d} up\n" for d in later))
    pending = dict(later)
    deadline = time.monotonic() + NM_CARRIER_WAIT_S
    while pending and time.monotonic() < deadline:
        for gone in [d for d in pending if not Path(f"/sys/class/net/{d}").exists()]:
            del pending[gone]  # the device went away (the lab is being taken down)
        ready = [d for d in pending if _carrier(d)]
        if ready:
            _ip(["-force", "-batch", "-"],
                stdin="".join(f"{ln}\n" for d in ready for ln in pending.pop(d)))
        else:
            time.sleep(NM_POLL_S)
    try:  # done: the pid file no longer names a live activator
        if int(ACTIVATOR_PID.read_text()) == os.getpid():
            ACTIVATOR_PID.unlink()
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    top = argparse.ArgumentParser(add_help=False)
    top.add_argument("--netplan", required=True, help="the netplan executable (the wrapper)")
    top.add_argument("--debug", action="store_true")
    known, rest = top.parse_known_args(argv)
    prog = f"{known.netplan} apply"
    sub = argparse.ArgumentParser(prog=prog, description="Apply current netplan config to "
                                  "running system")
    if rest[:1] == ["activate"] and len(rest) == 2:  # the detached NetworkManager stand-in
        activate(json.loads(rest[1]))
        return 0
    sub.add_argument("command", choices=["apply"], help=argparse.SUPPRESS)
    sub.add_argument("--sriov-only", action="store_true",
                     help="Only apply SR-IOV related configuration and exit")
    sub.add_argument("--only-ovs-cleanup", action="store_true",
                     help="Only clean up old OpenVSwitch interfaces and exit")
    sub.add_argument("--state", help="Directory containing previous YAML configuration")
    sub.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    args = sub.parse_args(rest)
    if args.sriov_only or args.only_ovs_cleanup:
        return 0  # no SR-IOV and no Open vSwitch in a lab
    generate = [known.netplan, *(["--debug"] if known.debug or args.debug else []), "generate"]
    if subprocess.call(generate) != 0:
        return EX_CONFIG
    if os.geteuid() != 0:
        print("netplan apply: Permission denied (run it as root)", file=sys.stderr)
        return 1
    try:
        apply()
    except (ShimError, OSError, ValueError) as exc:
        print(f"netplan apply (lab): {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
