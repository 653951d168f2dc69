"""Time in the lab: a time server on the management LAN and `chronyd -x` on every Spark.

The hosts share the machine's one kernel clock, so nothing may set it: every chronyd runs with
`-x` (it tracks and reports, and never touches the clock). The server lives in its own
namespace `NAME-ntp` on the lab's management bridge (198.18.K.250), serving its local clock;
each Spark's chronyd follows it, so `chronyc tracking` on a Spark reports a real, synchronised
source and `time.offset` is judged for real.

chrony is not installed on the machine (the package would replace the machine's own time
service): `make lab-tools` unpacks Debian's chrony package into `.lab-tools/chrony`, and the
lab runs those binaries. `FABRIC_LAB_CHRONY` names another unpacked tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fabric.lab import names, ns
from fabric.lab.lifecycle import mgmt

#: The server's host number on the management /24 (Sparks sit at their node id, others .251+).
SERVER_HOST = 250
#: An address on the management /24 where nothing answers (the `time` fault points a Spark here).
DEAD_HOST = 249
#: The server's namespace is NAME-<this>; its veth inside is eth0.
SERVER_NAME = "ntp"
SERVER_IF = "eth0"
#: Polls every 1/16 s (chrony accepts down to 2^-6): a lab synchronises in well under a second.
POLL = -4
REPO_TOOLS = Path(__file__).resolve().parents[3] / ".lab-tools" / "chrony"


@dataclass(frozen=True)
class Chrony:
    chronyd: str
    chronyc: str


def binaries() -> Chrony | None:
    """The chrony binaries the lab runs ($FABRIC_LAB_CHRONY, .lab-tools, or installed)."""
    for root in (os.environ.get("FABRIC_LAB_CHRONY"), str(REPO_TOOLS)):
        if root and (Path(root) / "usr/sbin/chronyd").exists():
            return Chrony(str(Path(root) / "usr/sbin/chronyd"), str(Path(root) / "usr/bin/chronyc"))
    chronyd, chronyc = shutil.which("chronyd"), shutil.which("chronyc")
    return Chrony(chronyd, chronyc) if chronyd and chronyc else None


def server_address(slot: int) -> str:
    return str(mgmt.address(slot, SERVER_HOST).ip)


def server_namespace(lab: str) -> str:
    return names.netns(lab, SERVER_NAME)


def server_veth(slot: int) -> str:
    return names.mgmt_veth(slot, SERVER_NAME)


def server_config(slot: int, piddir: Path) -> str:
    return (f"local stratum 8\nallow {mgmt.subnet(slot)}\nbindaddress {server_address(slot)}\n"
            f"cmdport 0\npidfile {piddir / 'chronyd-server.pid'}\n")


def client_config(server: str) -> str:
    """A Spark's chrony.conf: the lab server only; command port on loopback (chronyc as the
    user)."""
    return (f"server {server} iburst minpoll {POLL} maxpoll {POLL}\n"
            "pidfile /run/chrony/chronyd.pid\nbindcmdaddress 127.0.0.1\ncmdallow 127.0.0.1\n")


def install_chronyc(hostdir: Path, chrony: Chrony) -> None:
    """`chronyc` for the host's PATH: the holder lays `local-bin` over /usr/local/bin."""
    local = hostdir / "local-bin"
    local.mkdir(mode=0o755, exist_ok=True)
    (local / "chronyc").symlink_to(chrony.chronyc)


def start_server(lab: str, slot: int, labdir: Path, chrony: Chrony) -> int:
    """Start the lab's time server (its namespace and veth already wired); its pid."""
    conf = labdir / "ntp" / "chrony.conf"
    conf.parent.mkdir(mode=0o755, exist_ok=True)
    conf.write_text(server_config(slot, conf.parent))
    log = labdir / "logs" / "ntp.chronyd.log"
    argv = ns.in_ns(server_namespace(lab), [chrony.chronyd, "-x", "-u", "root", "-d", "-f",
                                            str(conf)])
    pid = ns.spawn(argv, log)
    ns.wait_until(f"time server {server_address(slot)}",
                  lambda: (conf.parent / "chronyd-server.pid").exists(), timeout=15,
                  failed=lambda: ns.exited_with(pid, log))
    return pid


def start_client(holder_pid: int, host: str, hostdir: Path, log: Path, server: str,
                 chrony: Chrony) -> int:
    """Start `chronyd -x` inside a Spark against `server`; its pid (synchronised later)."""
    conf = hostdir / "chrony.conf"
    conf.write_text(client_config(server))
    pid = ns.spawn(ns.in_host(holder_pid, [chrony.chronyd, "-x", "-u", "root", "-d", "-f",
                                           str(conf)]), log)
    ns.wait_until(f"{host}: chronyd", lambda: _running(holder_pid, chrony), timeout=15,
                  failed=lambda: ns.exited_with(pid, log))
    return pid


def _tracking(holder_pid: int, chrony: Chrony) -> str | None:
    """`chronyc -n tracking` inside a host; None while chronyd does not answer."""
    proc = subprocess.run(ns.in_host(holder_pid, [chrony.chronyc, "-n", "tracking"]),
                          capture_output=True, text=True, timeout=5, check=False)
    return proc.stdout if proc.returncode == 0 else None


def _running(holder_pid: int, chrony: Chrony) -> bool:
    return _tracking(holder_pid, chrony) is not None


def synchronised(holder_pid: int, chrony: Chrony) -> bool:
    """Whether a Spark's chronyd has selected a source (`Leap status : Normal`)."""
    return "Leap status     : Normal" in (_tracking(holder_pid, chrony) or "")


def root_lines(lab: str, slot: int) -> tuple[list[str], list[str]]:
    """(`ip -batch` lines in the root namespace, lines inside the server's namespace)."""
    bridge = names.bridge(lab)
    veth = server_veth(slot)
    root = [f"link add name {veth} type veth peer name {SERVER_IF} netns "
            f"{server_namespace(lab)}", f"link set {veth} master {bridge}", f"link set {veth} up"]
    inside = mgmt.host_lines(SERVER_IF, mgmt.address(slot, SERVER_HOST))
    return root, inside
