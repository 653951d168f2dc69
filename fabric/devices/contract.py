"""The one device contract, napalm-style: every device the toolkit drives (a DGX Spark, a
MikroTik switch model) offers the same getters and the same configure / verify / rollback
steps, each a Nornir task where it talks to the device (`task: Task` first, a `Result` back).

- getters: `get_facts` (typed facts, read-only) and `get_snapshot` (what a push may touch,
  read-only; it is also the backup a rollback restores);
- configure: `compare` plans (intent minus facts, nothing sent), `commit` applies exactly
  that changeset;
- verify: `links_down` (cheap, polled while links train) and `verify` (the device's own
  check that its planned state holds);
- rollback: `backup_entry` is what the run's manifest keeps about the device's changes, and
  `rollback` restores the device from its backup with it.

The push cycle (`fabric.push`) drives each device only through this contract; the devices
(`fabric.devices.spark`, `fabric.devices.crs804`, `fabric.devices.crs812`) implement it by
delegating to their modules. Platform differences stay data in each device's package.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from fabric.errors import InputError

if TYPE_CHECKING:
    from nornir.core.task import Result, Task

    from fabric.intent.model import Intent

#: The collection family every device reads for the fabric's fingerprint (`fabric gate`).
FINGERPRINT = "fingerprint"

FactsT = TypeVar("FactsT", contravariant=True)
SnapT = TypeVar("SnapT", contravariant=True)
ChangesT = TypeVar("ChangesT")


class PushRefused(InputError):
    """A changeset would touch something push must never touch (exit 2)."""


@dataclass(frozen=True)
class PushScope:
    """What a device's plan depends on beyond its own facts: the hosts in this push, whether
    other definitions of the Spark twins are taken over (`adopt`), and the Sparks that take
    their half of lossless RoCE (`ready`; None: every cabled one)."""

    hosts: frozenset[str]
    adopt: bool = False
    ready: frozenset[str] | None = None


class Device(Protocol[FactsT, SnapT, ChangesT]):
    """A device push and the fact collection can drive (see the module docstring)."""

    #: the inventory role of hosts of this device: "spark" | "switch"
    role: str
    #: the device's platform: "spark", or the switch's model key in platforms.yaml
    platform: str

    def get_facts(self, task: Task, intent: Intent, narrow: bool = False,
                  families: Collection[str] | None = None) -> Result:
        """Nornir task: the host's typed facts (`Result.result`), read-only."""
        ...

    def get_snapshot(self, task: Task, intent: Intent, export: bool = False) -> Result:
        """Nornir task: everything a push may touch on the host (`Result.result`), read-only;
        `export`: also the device's own text export, where it has one (the backup)."""
        ...

    def compare(self, intent: Intent, facts: FactsT, snap: SnapT,
                scope: PushScope) -> ChangesT:
        """The changeset that makes the host match the intent; nothing is sent."""
        ...

    def commit(self, task: Task, changes: ChangesT, snap: SnapT) -> Result:
        """Nornir task: apply exactly `changes` (a dry run reports them, changing nothing)."""
        ...

    def links_down(self, task: Task, names: tuple[str, ...],
                   wants: Mapping[str, Any] | None = None) -> Result:
        """Nornir task: which of the links `names` are not ready yet (`Result.result`)."""
        ...

    def verify(self, task: Task, intent: Intent, in_run: frozenset[str]) -> Result:
        """Nornir task: what does not hold of the host's planned state (`Result.result`,
        empty: verified); `in_run`: the hosts pushed with it (others are not relied on)."""
        ...

    def backup_entry(self, intent: Intent, changes: ChangesT) -> dict[str, Any]:
        """What the run's manifest keeps about the host's changes (what `rollback` needs)."""
        ...

    def rollback(self, task: Task, backup: SnapT, entry: Mapping[str, Any]) -> Result:
        """Nornir task: restore the host from `backup` as its manifest `entry` says."""
        ...
