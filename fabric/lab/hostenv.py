"""A lab host's private world: hostname (UTS), a copy-on-write /etc and a private /run.

One "holder" process per host is started with `ip netns exec NS unshare --mount --uts`; it sets
the hostname, mounts an overlay over /etc (writes land in the lab directory, so /etc/netplan and
/etc/hostname are private and the machine's own files are never modified) and a tmpfs over /run
(lldpd's socket and sshd's privilege-separation directory do not clash between hosts), binds the
lab directory back under /run, then sleeps. Daemons enter it with `nsenter -t HOLDER -m -u -n`.

No time daemon runs in a lab host, so validation's `time` check warns "chronyc missing" there:
the hosts share the machine's one kernel clock, so a lab chronyd (even `-x`, never adjusting
it) would only report on a private toy server, and installing the chrony package starts the
distribution's chronyd on the machine itself (replacing systemd-timesyncd on Debian), which a
lab must never do. The warn is the honest answer.
"""

from __future__ import annotations

from pathlib import Path

from fabric.lab import ns

HOLDER_SCRIPT = r"""
set -eu
host=$1 labdir=$2 hostdir=$3
hostname "$host"
up=$hostdir/etc.upper work=$hostdir/etc.work
mkdir -p "$up" "$work"
mount -t overlay fabric-etc -o "lowerdir=/etc,upperdir=$up,workdir=$work" /etc
mkdir -p /etc/netplan
echo "$host" > /etc/hostname
printf '127.0.1.1\t%s\n' "$host" >> /etc/hosts
if [ -f "$hostdir/passwd.add" ]; then cat "$hostdir/passwd.add" >> /etc/passwd; fi
if [ -f "$hostdir/shadow.add" ]; then cat "$hostdir/shadow.add" >> /etc/shadow; fi
# drop this mount namespace's copies of every netns handle, or deleting another lab's
# namespaces would not free them while this host lives
if [ -d /run/netns ]; then
  for m in /run/netns/*; do umount -l "$m" 2>/dev/null || true; done
  umount -l /run/netns 2>/dev/null || true
fi
cd "$labdir"
mount -t tmpfs -o mode=755,size=64m fabric-run /run
mkdir -p "$labdir" /run/sshd /run/lldpd
mount --no-canonicalize --bind . "$labdir"
: > "$hostdir/holder.ready"
exec sleep infinity
"""


def start_holder(netns: str, host: str, labdir: Path, hostdir: Path) -> int:
    """Start the holder of `host` and wait until its mounts are in place; its pid."""
    ready = hostdir / "holder.ready"
    log = hostdir / "holder.log"
    argv = ns.in_ns(netns, ["unshare", "--mount", "--uts", "--propagation", "private",
                            "sh", "-c", HOLDER_SCRIPT, "holder", host, str(labdir),
                            str(hostdir)])
    pid = ns.spawn(argv, log)
    ns.wait_until(f"{host}: private /etc and /run", ready.exists, timeout=15,
                  failed=lambda: ns.exited_with(pid, log))
    return pid


def host_path(holder_pid: int, path: str) -> Path:
    """`path` as the host sees it (through /proc/PID/root, from outside)."""
    return Path(f"/proc/{holder_pid}/root{path}")
