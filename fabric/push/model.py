"""Typed records of a push changeset: what would change on each host, item by item."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NetdevWant:
    """The runtime state a Spark fabric twin should have."""

    netdev: str
    mtu: int
    addresses: tuple[str, ...]  # "a.b.c.d/len"
    link_id: str
    peer_address: str | None  # an address to ping over this twin (verification)


@dataclass(frozen=True)
class Attr:
    """One attribute change: `key` goes from `old` to `new` (old None: not set / unknown)."""

    key: str
    old: str | None
    new: str

    def __str__(self) -> str:
        return f"{self.key}: {self.old if self.old is not None else '-'} -> {self.new}"


@dataclass(frozen=True)
class ApiCall:
    """One RouterOS API call: `set` an item (by name or .id) or `add` one."""

    path: str
    action: str  # "set" | "add"
    target: str | None
    attrs: tuple[Attr, ...]

    def args(self) -> dict[str, str]:
        return {a.key: a.new for a in self.attrs}

    def __str__(self) -> str:
        if self.action == "add":
            words = " ".join(f"{a.key}={a.new}" for a in self.attrs)
            return f"{self.path} add {words}"
        target = f" {self.target}" if self.target else ""
        return f"{self.path} set{target} " + ", ".join(str(a) for a in self.attrs)


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
    files: tuple[FileChange, ...]  # netplan, sysctl.d, lossless QoS (render.SPARK_FILES)
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


@dataclass(frozen=True)
class SwitchChanges:
    """What `push` would change on the switch, as API calls."""

    host: str
    version: str
    calls: tuple[ApiCall, ...]
    touched_lanes: tuple[str, ...]
    bridge: str
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    bounced: tuple[str, ...] = ()  # lanes whose link settings change (their group restarts)
    refused: str | None = None  # why the switch is shown but not changed (the push stops)

    @property
    def changes(self) -> int:
        return sum(len(c.attrs) if c.action == "set" else 1 for c in self.calls)


@dataclass(frozen=True)
class ChangeSet:
    """The whole push: one changeset per reachable host, and why the others are missing."""

    topology: str
    sparks: dict[str, SparkChanges] = field(default_factory=dict)
    switch: SwitchChanges | None = None
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def changes(self) -> int:
        return sum(p.changes for p in self.sparks.values()) + (
            self.switch.changes if self.switch else 0)

    @property
    def refused(self) -> dict[str, str]:
        """Hosts whose changes are shown but will not be made, and why."""
        out = {h: p.refused for h, p in sorted(self.sparks.items()) if p.refused}
        if self.switch is not None and self.switch.refused:
            out[self.switch.host] = self.switch.refused
        return out

    def hosts_with_changes(self) -> list[str]:
        """Hosts an apply changes (refused ones are not)."""
        if self.switch is not None and self.switch.refused:
            return []  # the fabric depends on its switch: nothing is changed anywhere
        out = [h for h, p in sorted(self.sparks.items()) if p.changes and not p.refused]
        if self.switch is not None and self.switch.changes:
            out.append(self.switch.host)
        return out
