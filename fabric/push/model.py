"""The whole push changeset: one device changeset per reachable host (the records of each
device live with it: `fabric.devices.spark.model`, `fabric.devices.crs804.model`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric.devices.crs804.model import SwitchChanges
from fabric.devices.spark.model import SparkChanges


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
