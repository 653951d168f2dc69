"""A lab host's private world: hostname (UTS), a copy-on-write /etc and a private /run.

One "holder" process per host is started with `ip netns exec NS unshare --mount --uts`; it sets
the hostname, mounts an overlay over /etc (writes land in the lab directory, so /etc/netplan and
/etc/hostname are private and the machine's own files are never modified) and a tmpfs over /run
(lldpd's socket and sshd's privilege-separation directory do not clash between hosts), binds the
lab directory back under /run, then sleeps. Daemons enter it with `nsenter -t HOLDER -m -u -n`.

A Spark is set up like a DGX OS host (`write_spark_files`): its admin logs in as a normal user
(`names.SPARK_USER`, home /home/USER private to the host) with sudo (a drop-in in
/etc/sudoers.d, NOPASSWD unless the lab was built with `--sudo-password`); /etc/netplan holds
exactly DGX OS's 01-network-manager-all.yaml, and none of the machine's netplan files show
through (/etc/netplan is emptied in the overlay, /lib/netplan is replaced by a directory with
the generator only); `netplan` is the lab's wrapper (see fabric/lab/host/netplan_shim.py), the real
script stays reachable under /run. /var/lib/sudo, /tmp and /var/tmp are private too, so nothing
a lab user does is written to the machine or seen by another host.

A lab built from a lossless topology also gets the lab's `mlnx_qos` stand-in on each Spark's
PATH (`install_mlnx_qos`, fabric/lab/host/mlnx_qos_shim.py).

Each Spark runs `chronyd -x` (it never touches the clock the hosts share with the machine)
against the lab's time server, and `chronyc` is on its PATH; see fabric/lab/host/timesync.py.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from fabric.lab import names, ns
from fabric.lab.host import docker_shim, labfiles, mlnx_qos_shim, netplan_shim, nmcli_shim

#: PATH of a DGX OS (Ubuntu) login, from its /etc/environment (pam_env): sbin included.
UBUNTU_PATH = ("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games:"
               "/usr/local/games:/snap/bin")
#: netplan's directories under /lib (it reads YAML there too); each is replaced inside a Spark.
LIB_NETPLAN = ("/usr/lib/netplan", "/lib/netplan")
#: Supplementary groups of the Spark user (those the machine has).
SPARK_GROUPS = ("adm", "sudo")
SHIM = str(Path(netplan_shim.__file__).resolve())
MLNX_QOS_SHIM = str(Path(mlnx_qos_shim.__file__).resolve())
NMCLI_SHIM = str(Path(nmcli_shim.__file__).resolve())

HOLDER_SCRIPT = r"""
set -eu
umask 022
host=$1 labdir=$2 hostdir=$3
hostname "$host"
up=$hostdir/etc.upper work=$hostdir/etc.work
mkdir -p "$up" "$work"
mount -t overlay fabric-etc -o "lowerdir=/etc,upperdir=$up,workdir=$work" /etc
# none of the machine's netplan files show through (a re-created directory is opaque)
rm -rf /etc/netplan
mkdir /etc/netplan
if [ -d "$hostdir/etc.add" ]; then cp -a "$hostdir/etc.add/." /etc/; fi
echo "$host" > /etc/hostname
printf '127.0.1.1\t%s\n' "$host" >> /etc/hosts
for f in passwd shadow group gshadow; do
  if [ -f "$hostdir/$f.new" ]; then cat "$hostdir/$f.new" > "/etc/$f"; fi
  if [ -f "$hostdir/$f.add" ]; then cat "$hostdir/$f.add" >> "/etc/$f"; fi
done
if [ -d "$hostdir/lib-netplan" ]; then
  for d in /usr/lib/netplan /lib/netplan; do
    if [ -d "$d" ] && ! mountpoint -q "$d"; then mount --bind "$hostdir/lib-netplan" "$d"; fi
  done
fi
if [ -d "$hostdir/home" ] && [ -d /home ]; then mount --bind "$hostdir/home" /home; fi
if [ -d "$hostdir/var-lib-sudo" ] && [ -d /var/lib/sudo ]; then
  mount --bind "$hostdir/var-lib-sudo" /var/lib/sudo
fi
# drop this mount namespace's copies of every netns handle, or deleting another lab's
# namespaces would not free them while this host lives
if [ -d /run/netns ]; then
  for m in /run/netns/*; do umount -l "$m" 2>/dev/null || true; done
  umount -l /run/netns 2>/dev/null || true
fi
# the toolkit's own Python (the rehearsal runs it as the lab user) may sit under a directory
# only root may enter (pyenv in /root): an overlay, private to this host, makes each such
# directory traversable (0711, no listing); nothing of the machine changes
if [ -f "$hostdir/traverse" ]; then
  n=0
  while IFS= read -r d; do
    n=$((n + 1)); t="$hostdir/traverse.$n"
    mkdir -p "$t/upper" "$t/work"; chmod 0711 "$t/upper"
    mount -t overlay -o "lowerdir=$d,upperdir=$t/upper,workdir=$t/work" fabric-traverse "$d"
  done < "$hostdir/traverse"
fi
# what the toolkit writes to /tmp and /var/tmp on a Spark (launch records, the rehearsal
# script, probe scratch) stays in the host, never on the machine or in another host
# (the toolkit's own trees that live under them, e.g. a checkout in /tmp, are kept visible)
n=0
if [ -f "$hostdir/keep-tmp" ]; then
  while IFS= read -r d; do
    n=$((n + 1)); mkdir -p "$hostdir/keep.$n"; mount --bind "$d" "$hostdir/keep.$n"
  done < "$hostdir/keep-tmp"
fi
mount -t tmpfs -o mode=1777,size=256m fabric-tmp /tmp
mount -t tmpfs -o mode=1777,size=256m fabric-var-tmp /var/tmp
n=0
if [ -f "$hostdir/keep-tmp" ]; then
  while IFS= read -r d; do
    n=$((n + 1)); mkdir -p "$d"; mount --bind "$hostdir/keep.$n" "$d"
  done < "$hostdir/keep-tmp"
fi
cd "$labdir"
mount -t tmpfs -o mode=755,size=64m fabric-run /run
mkdir -p "$labdir" /run/sshd /run/lldpd /run/chrony
mount --no-canonicalize --bind . "$labdir"
if [ -f "$hostdir/netplan-wrapper" ]; then
  script=$(cat "$hostdir/netplan-script")
  real=$(cat "$hostdir/netplan-real")
  mkdir -p "${real%/*}"
  : > "$real"
  mount --bind "$script" "$real"
  mount --bind "$hostdir/netplan-wrapper" "$script"
fi
# the lab's chronyc (see timesync) on the PATH, read-only over the machine's /usr/local/bin
if [ -d "$hostdir/local-bin" ]; then
  mount -t overlay -o "lowerdir=$hostdir/local-bin:/usr/local/bin" fabric-local-bin /usr/local/bin
fi
: > "$hostdir/holder.ready"
exec sleep infinity
"""


@dataclass(frozen=True)
class SparkUser:
    """The admin login of a lab Spark: a normal user with sudo."""

    name: str
    uid: int
    #: crypt(3) hash of its password, or None: no password, sudo without one (NOPASSWD)
    password_hash: str | None

    @property
    def home(self) -> str:
        return f"/home/{self.name}"


def spark_user(password_hash: str | None) -> SparkUser:
    """`names.SPARK_USER` with the lowest uid (= gid) from 1000 that the machine leaves free."""
    taken: set[int] = set()
    for path in ("/etc/passwd", "/etc/group"):
        for line in Path(path).read_text().splitlines():
            fields = line.split(":")
            if len(fields) > 2 and fields[0] == names.SPARK_USER:
                raise ns.LabError(f"this machine has its own {names.SPARK_USER} in {path}; "
                                  "a lab Spark's login of that name would clash with it")
            if len(fields) > 2 and fields[2].isdigit():
                taken.add(int(fields[2]))
    uid = next(n for n in range(1000, 60000) if n not in taken)
    return SparkUser(names.SPARK_USER, uid, password_hash)


def netplan_script() -> Path:
    """The real netplan executable (/usr/sbin/netplan is a link to a Python script)."""
    found = shutil.which("netplan") or "/usr/sbin/netplan"
    script = Path(found).resolve()
    first = script.read_bytes()[:128].split(b"\n", 1)[0].decode(errors="replace")
    if not (first.startswith("#!") and "python" in first):
        raise ns.LabError(f"{script} is not netplan's Python script; the lab's netplan "
                          "wrapper needs netplan.io from Debian/Ubuntu (run `make apt`)")
    return script


def write_spark_files(hostdir: Path, user: SparkUser, script: Path) -> None:
    """What the holder puts into a Spark: the login, sudo, DGX OS's netplan, the wrapper."""
    etc = hostdir / "etc.add"
    for sub in ("", "netplan", "sudoers.d", "profile.d"):
        (etc / sub).mkdir(mode=0o755, exist_ok=True)
        (etc / sub).chmod(0o755)
    base = etc / "netplan" / netplan_shim.BASE_NAME
    base.write_text(netplan_shim.BASE_TEXT)
    base.chmod(0o600)
    nopasswd = "NOPASSWD: " if user.password_hash is None else ""
    sudoers = etc / "sudoers.d" / f"90-{user.name}"
    sudoers.write_text(f"# fabric lab: the Spark admin's sudo\n{user.name} ALL=(ALL:ALL) "
                       f"{nopasswd}ALL\n")
    sudoers.chmod(0o440)
    # a login shell reads /etc/profile, which on Debian drops sbin from a user's PATH
    (etc / "profile.d" / "00-dgx-os-path.sh").write_text(
        f'PATH="{UBUNTU_PATH}"\nexport PATH\n')
    u = user
    (hostdir / "passwd.add").write_text(f"{u.name}:x:{u.uid}:{u.uid}:DGX admin:{u.home}:"
                                        "/bin/bash\n")
    labfiles.write_private(hostdir / "shadow.add",
                           f"{u.name}:{u.password_hash or '*'}:20000:0:99999:7:::\n")
    # its own group, and adm and sudo like the first user of an Ubuntu install (adm runs
    # lldpcli, which is setuid _lldpd and executable by adm only)
    (hostdir / "group.new").write_text(_with_member(Path("/etc/group").read_text(), u.name, 3)
                                       + f"{u.name}:x:{u.uid}:\n")
    gshadow = Path("/etc/gshadow")
    if gshadow.exists():
        labfiles.write_private(hostdir / "gshadow.new",
                               _with_member(gshadow.read_text(), u.name, 3) + f"{u.name}:!::\n")
    _home(hostdir / "home", user)
    lib = hostdir / "var-lib-sudo"
    lib.mkdir(mode=0o711)
    (lib / "lectured").mkdir(mode=0o700)
    _lib_netplan(hostdir / "lib-netplan")
    real = netplan_shim.real_path(str(script))
    shebang = script.read_bytes()[:128].split(b"\n", 1)[0].decode()
    wrapper = hostdir / "netplan-wrapper"
    wrapper.write_text(netplan_shim.wrapper_text(str(script), shebang, sys.executable, SHIM))
    wrapper.chmod(0o755)
    (hostdir / "netplan-script").write_text(str(script))
    (hostdir / "netplan-real").write_text(real)


def _local_tool(hostdir: Path, name: str, what: str, body: str) -> None:
    """Executable `name` in the host's `local-bin` (the holder lays it over /usr/local/bin):
    a shell script saying `what` it is, then `body`."""
    local = hostdir / "local-bin"
    local.mkdir(mode=0o755, exist_ok=True)
    tool = local / name
    tool.write_text(f"#!/bin/sh\n# {name} in a fabric lab Spark: {what}\n{body}")
    tool.chmod(0o755)


def install_mlnx_qos(hostdir: Path) -> None:
    """`mlnx_qos` for the host's PATH: the lab's stand-in, state per netdev in the host's
    private /run (fabric/lab/host/mlnx_qos_shim.py), and an `ethtool` whose pause parameters
    come from the same state. Installed where the topology is lossless; other labs keep a
    Spark without mlnx_qos."""
    _local_tool(hostdir, "mlnx_qos", "the lab's stand-in (fabric/lab/host/mlnx_qos_shim.py)",
                f"exec {sys.executable} -I {MLNX_QOS_SHIM} \"$@\"\n")
    # -a/-A from the same NIC state, the rest the real ethtool
    _local_tool(hostdir, "ethtool", "pause parameters from the NIC stand-in "
                "(fabric/lab/host/mlnx_qos_shim.py), all else the real one",
                f"exec {sys.executable} -I {MLNX_QOS_SHIM} --as-ethtool \"$@\"\n")


def install_nmcli(hostdir: Path, sudo_asks: bool = False) -> None:
    """`nmcli` for the host's PATH: the lab's stand-in listing NetworkManager's keyfiles
    (fabric/lab/host/nmcli_shim.py); DGX OS has NetworkManager. The daemon reads root's
    keyfiles, so the stand-in runs through `sudo -n` for a user where sudo asks no password
    (`sudo_asks`: it does; then it lists what the user can read)."""
    sudo = "" if sudo_asks else ('if [ "$(id -u)" != 0 ]; then exec sudo -n $run "$@"; fi\n')
    _local_tool(hostdir, "nmcli", "the lab's stand-in (fabric/lab/host/nmcli_shim.py)",
                f"run=\"{sys.executable} -I -S {NMCLI_SHIM}\"\n{sudo}exec $run \"$@\"\n")


def install_docker(hostdir: Path) -> None:
    """`docker` for the host's PATH: the lab's stand-in listing the host's images
    (fabric/lab/host/docker_shim.py), the engines' default images in its private /etc."""
    _local_tool(hostdir, "docker", "the lab's stand-in (fabric/lab/host/docker_shim.py)",
                docker_shim.STAND_IN)
    images = hostdir / "etc.add" / docker_shim.IMAGES_FILE.removeprefix("/etc/")
    images.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    images.write_text(docker_shim.lab_images_text())
    images.chmod(0o644)


def _with_member(text: str, user: str, column: int) -> str:
    """/etc/group (or gshadow) text with `user` added to the SPARK_GROUPS that exist."""
    out = []
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) > column and fields[0] in SPARK_GROUPS:
            members = [m for m in fields[column].split(",") if m]
            fields[column] = ",".join([*members, user])
        out.append(":".join(fields))
    return "".join(f"{line}\n" for line in out)


def _home(root: Path, user: SparkUser) -> None:
    """/home of the Spark: the user's home only (0750, from /etc/skel), like Ubuntu's."""
    root.mkdir(mode=0o755)
    home = root / user.name
    home.mkdir(mode=0o750)
    skel = Path("/etc/skel")
    if skel.is_dir():
        for entry in skel.iterdir():
            if entry.is_file():
                shutil.copy2(entry, home / entry.name)
                os.chown(home / entry.name, user.uid, user.uid)
    os.chown(home, user.uid, user.uid)
    home.chmod(0o750)


def _lib_netplan(target: Path) -> None:
    """A stand-in for /lib/netplan: the machine's entries except YAML (the generator stays)."""
    target.mkdir(mode=0o755)
    seen: set[Path] = set()
    for d in map(Path, LIB_NETPLAN):
        if not d.is_dir() or d.resolve() in seen:
            continue
        seen.add(d.resolve())
        for entry in d.iterdir():
            if entry.name.endswith(".yaml") or (target / entry.name).exists():
                continue
            real = entry.resolve()
            if real.parent.resolve() in seen:  # a file inside the hidden directory itself
                shutil.copy2(real, target / entry.name)
            else:
                (target / entry.name).symlink_to(real)


def start_holder(netns: str, host: str, labdir: Path, hostdir: Path) -> int:
    """Start the holder of `host` and wait until its mounts are in place; its pid."""
    ready = hostdir / "holder.ready"
    log = hostdir / "holder.log"
    closed = closed_ancestors(Path(sys.executable)) + closed_ancestors(Path(sys.prefix))
    (hostdir / "traverse").write_text("".join(f"{d}\n" for d in dict.fromkeys(closed)))
    (hostdir / "keep-tmp").write_text("".join(f"{d}\n" for d in kept_under_tmp()))
    argv = ns.in_ns(netns, ["unshare", "--mount", "--uts", "--propagation", "private",
                            "sh", "-c", HOLDER_SCRIPT, "holder", host, str(labdir),
                            str(hostdir)])
    pid = ns.spawn(argv, log)
    ns.wait_until(f"{host}: private /etc and /run", ready.exists, timeout=15,
                  failed=lambda: ns.exited_with(pid, log))
    return pid


def kept_under_tmp() -> list[str]:
    """The toolkit's own trees (its checkout, venv, Python, lab tools) that sit under /tmp or
    /var/tmp: the hosts' private /tmp and /var/tmp must still show them at the same path."""
    trees = [Path(__file__).resolve().parents[3], Path(sys.prefix).resolve(),
             Path(sys.executable).resolve().parent.parent]
    if os.environ.get("FABRIC_LAB_CHRONY"):
        trees.append(Path(os.environ["FABRIC_LAB_CHRONY"]).resolve())
    out: list[str] = []
    for tree in trees:
        for top in ("/tmp", "/var/tmp"):
            if tree.is_relative_to(top) and tree != Path(top) and tree.is_dir():
                out.append(str(tree))
    return [d for d in dict.fromkeys(out)
            if not any(d != o and Path(d).is_relative_to(o) for o in out)]


def closed_ancestors(path: Path) -> list[str]:
    """The directories above `path` (symlinks resolved) that other users may not enter."""
    out = []
    for d in reversed(path.resolve().parents):
        try:
            if not d.stat().st_mode & 0o001:
                out.append(str(d))
        except OSError:
            continue
    return out


def host_path(holder_pid: int, path: str) -> Path:
    """`path` as the host sees it (through /proc/PID/root, from outside)."""
    return Path(f"/proc/{holder_pid}/root{path}")
