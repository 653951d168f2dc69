"""Per-lab SSH: host keys, the client key, known_hosts, and one real OpenSSH sshd per host."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fabric.lab import ns
from fabric.lab.host.hostenv import host_path

SSHD = "/usr/sbin/sshd"
SFTP = "/usr/lib/openssh/sftp-server"


def keygen(path: Path, comment: str) -> str:
    """Create an ed25519 key pair at `path` (no passphrase); the public key line."""
    ns.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    path.chmod(0o600)
    return path.with_suffix(".pub").read_text().strip()


def known_hosts_line(address: str, public_key: str) -> str:
    kind, blob = public_key.split()[:2]
    return f"{address} {kind} {blob}"


def config(*, address: str, host_key: Path, authorized_keys: Path, users: Sequence[str],
           force_command: str | None = None, passwords: bool = False,
           path: str | None = None) -> str:
    """sshd_config for one lab host: key login only (plus passwords for the switch CLI).

    `path`: the PATH of every session (without PAM, sshd would give a user its compiled-in
    PATH without sbin; DGX OS gives /etc/environment's through pam_env)."""
    lines = [
        f"ListenAddress {address}:22",
        f"HostKey {host_key}",
        "PidFile /run/sshd.pid",
        f"AuthorizedKeysFile {authorized_keys}",
        "PubkeyAuthentication yes",
        f"PasswordAuthentication {'yes' if passwords else 'no'}",
        "KbdInteractiveAuthentication no",
        f"PermitRootLogin {'yes' if passwords else 'prohibit-password'}",
        "PermitEmptyPasswords no",
        "UsePAM no",
        f"AllowUsers {' '.join(users)}",
        "UseDNS no",
        "PrintMotd no",
        "PrintLastLog no",
        "MaxStartups 64:30:128",
        "MaxSessions 32",
        "AcceptEnv LANG LC_*",
        f"Subsystem sftp {SFTP}",
    ]
    if path:
        lines.append(f"SetEnv PATH={path}")
    if force_command:
        lines.append(f"ForceCommand {force_command}")
    return "\n".join(lines) + "\n"


def start(holder_pid: int, host: str, conf: Path, log: Path, address: str) -> int:
    """Start sshd inside the host and wait until it accepts connections; its pid."""
    ns.run(ns.in_host(holder_pid, [SSHD, "-t", "-f", str(conf)]))
    pid = ns.spawn(ns.in_host(holder_pid, [SSHD, "-D", "-e", "-f", str(conf)]), log)
    ns.wait_until(f"{host}: sshd on {address}:22", lambda: ns.port_open(address, 22),
                  timeout=15, failed=lambda: ns.exited_with(pid, log))
    ns.wait_until(f"{host}: sshd pid file",
                  lambda: host_path(holder_pid, "/run/sshd.pid").exists(), timeout=5)
    return pid
