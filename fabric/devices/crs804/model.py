"""Typed records of the switch's push changeset: RouterOS API calls, attribute by attribute."""

from __future__ import annotations

from dataclasses import dataclass


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
