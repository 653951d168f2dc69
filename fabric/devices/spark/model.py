"""Typed records of a Spark's push changeset: its twins' wanted state, its files, its commands."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NetdevWant:
    """The runtime state a Spark fabric twin should have."""

    netdev: str
    mtu: int
    addresses: tuple[str, ...]  # "a.b.c.d/len"
    link_id: str
    peer_address: str | None  # an address to ping over this twin (verification)


@dataclass(frozen=True)
class FileChange:
    """One file push manages on a Spark: what is there, what the intent wants, the diff."""

    path: str
    old: str | None  # None: the file does not exist
    new: str | None  # None: the file is removed (a foreign definition push adopts)
    diff: str  # unified diff, "" when the file is already right
    mode: str  # octal mode it is written with


@dataclass(frozen=True)
class SparkChanges:
    """What `push` would change on one Spark."""

    host: str
    files: tuple[FileChange, ...]  # netplan, sysctl.d, lossless QoS (platform.SPARK_FILES)
    commands: tuple[str, ...]  # runtime `ip` / `sysctl` (+ lossless: `mlnx_qos`, ECN, ToS)
    wants: tuple[NetdevWant, ...]
    touched: tuple[str, ...]  # netdevs the changeset changes
    notes: tuple[str, ...] = ()
    refused: str | None = None  # why this host is shown but not changed (exit 3)
    netplan: bool = False  # netplan applies the twins' state (the `ip` commands show its effect)

    def file(self, path: str) -> FileChange:
        return next(f for f in self.files if f.path == path)

    @property
    def changed_files(self) -> tuple[FileChange, ...]:
        return tuple(f for f in self.files if f.diff)

    @property
    def changes(self) -> int:
        return len(self.commands) + len(self.changed_files)
