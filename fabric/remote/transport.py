"""The SSH session of a host the toolkit drives through exec channels only (the Sparks).

Every command the toolkit runs on a Spark goes over an exec channel of the session's
transport (`fabric.remote.exec`, `fabric.remote.burst`); nothing reads an interactive shell.
So a Spark's session is an authenticated paramiko transport and no more: Nornir connection
`SPARK_SSH` (`SparkSSH`), opened with the inventory's Netmiko-style options
(`fabric.remote.nornir_setup.ssh_extras`: host keys, key file, timeouts).

It is not Netmiko's: Netmiko's Linux driver opens a pty and a login shell at every connect
and probes its prompt with fixed sleeps (about 0.2 s per host), and importing Netmiko loads
its every vendor driver (281 modules, about 0.1 s of every command's start-up on the lab's
machine). Netmiko stays for the switch's CLI (`fabric.devices.crs804.backup_switch_config`).

Its TCP socket has TCP_NODELAY (`open_socket`), as OpenSSH's own client sets for its
sessions: paramiko's socket has Nagle on, and each exec channel's small packets then wait for
sshd's delayed ACK (40 ms on Linux). Measured on a lab Spark: one exec round trip (`true`)
48 ms with Nagle, 3.4 ms without.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import paramiko

from fabric.remote.exec import SPARK_SSH

__all__ = ["SPARK_SSH", "AuthFailed", "ConnectFailed", "SessionError", "SparkSSH", "SparkSession",
           "connect", "open_socket", "ssh_client"]


class SessionError(Exception):
    """A Spark's SSH session could not be opened; the message says why."""


class ConnectFailed(SessionError):
    """No TCP connection to the host's SSH port (refused, no route, timed out)."""


class AuthFailed(SessionError):
    """The host refused the key (or user)."""


def open_socket(host: str, port: int, timeout: float | None) -> socket.socket:
    """A TCP connection to `host`:`port` with TCP_NODELAY, for paramiko to run SSH over."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def ssh_client(extras: dict[str, Any]) -> paramiko.SSHClient:
    """A client that knows the hosts `extras` trusts: `alt_key_file` (with `alt_host_keys`)
    and the user's own known_hosts (with `system_host_keys`). `ssh_strict` (the default)
    refuses any other host; without it an unknown host is accepted, as Netmiko does."""
    client = paramiko.SSHClient()
    if extras.get("system_host_keys"):
        client.load_system_host_keys()
    known = extras.get("alt_key_file")
    if extras.get("alt_host_keys") and known and os.path.isfile(known):  # else: host unknown
        client.load_host_keys(str(known))
    strict = extras.get("ssh_strict", True)
    client.set_missing_host_key_policy(
        paramiko.RejectPolicy() if strict else paramiko.AutoAddPolicy())
    return client


def connect(hostname: str, port: int, username: str | None, password: str | None,
            extras: dict[str, Any]) -> paramiko.SSHClient:
    """An authenticated SSH client to the host (`ssh_client`'s host keys); `ConnectFailed`
    or `AuthFailed` with the reason, paramiko's own errors for a host key that does not
    match."""
    client = ssh_client(extras)
    use_keys = bool(extras.get("use_keys"))
    try:
        sock = open_socket(hostname, port, extras.get("conn_timeout", 10))
        client.connect(hostname, port=port, username=username, password=password or None,
                       key_filename=extras.get("key_file") if use_keys else None,
                       look_for_keys=use_keys, allow_agent=bool(extras.get("allow_agent")),
                       timeout=extras.get("conn_timeout", 10), sock=sock,
                       auth_timeout=extras.get("auth_timeout", 10),
                       banner_timeout=extras.get("banner_timeout", 10))
    except paramiko.AuthenticationException as exc:
        client.close()
        raise AuthFailed(f"Authentication to {hostname}:{port} failed: {exc}") from exc
    except OSError as exc:
        client.close()
        raise ConnectFailed(f"TCP connection to {hostname}:{port} failed: {exc}") from exc
    except BaseException:
        client.close()
        raise
    return client


class SparkSession:
    """An authenticated SSH session: `remote_conn_pre` is its paramiko client (the name
    Netmiko gives it, which the exec helpers read)."""

    def __init__(self, client: paramiko.SSHClient) -> None:
        self.remote_conn_pre = client

    def disconnect(self) -> None:
        self.remote_conn_pre.close()


class SparkSSH:
    """Nornir connection plugin `SPARK_SSH`: `connection` is a `SparkSession`."""

    def __init__(self) -> None:
        self.connection: SparkSession | None = None

    def open(self, hostname: str | None, username: str | None, password: str | None,
             port: int | None, platform: str | None, extras: dict[str, Any] | None = None,
             configuration: Any = None) -> None:
        self.connection = SparkSession(
            connect(str(hostname), port or 22, username, password, extras or {}))

    def close(self) -> None:
        if self.connection is not None:
            self.connection.disconnect()
