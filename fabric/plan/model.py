"""Typed records of a migration plan: steps, cable actions, gates, address changes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Gate:
    """A validation gate: which families run, against which topology and hosts."""

    families: tuple[str, ...]
    topology: str
    hosts: tuple[str, ...] = ()

    @property
    def full(self) -> bool:
        """Every registered check runs (no `--only`): the only report `fabric gate` opens on."""
        return self.families == ("all",)

    @property
    def command(self) -> str:
        cmd = f"fabric validate -t {self.topology}"
        if not self.full:
            cmd += f" --only {','.join(self.families)}"
        return cmd + (f" --hosts {','.join(self.hosts)}" if self.hosts else "")


@dataclass(frozen=True)
class CableAction:
    """One hand movement on a cable: `from_port` -> `to_port` (None = stock / the shelf)."""

    cable: str
    action: str  # unplug | move | plug | store
    from_port: str | None
    to_port: str | None
    note: str = ""


@dataclass(frozen=True)
class AddressChange:
    """A fabric netdev's address before and after (None = none planned)."""

    host: str
    netdev: str
    before: str | None
    after: str | None

    @property
    def kept(self) -> bool:
        return self.before == self.after


@dataclass(frozen=True)
class EnvChange:
    """A launch environment variable before and after (None = unset)."""

    name: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Step:
    """One runbook step: what to do, who is down meanwhile, how to check and undo it."""

    number: int
    phase: str
    title: str
    down: tuple[str, ...]
    serving: tuple[str, ...]
    duration_min: float
    gate: Gate
    rollback: tuple[str, ...]
    bounced: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    cables: tuple[CableAction, ...] = ()
    switch_commands: tuple[str, ...] = ()
    addresses: tuple[AddressChange, ...] = ()
    env: tuple[EnvChange, ...] = ()


@dataclass(frozen=True)
class Capacity:
    """Switch ports needed against ports available."""

    switch: str | None
    model: str | None
    needed: int
    available: int
    gbps: int

    @property
    def fits(self) -> bool:
        return self.needed <= self.available


@dataclass(frozen=True)
class Plan:
    """A migration from one topology to another, as ordered gated steps."""

    source: str
    target: str
    source_hash: str
    target_hash: str
    steps: tuple[Step, ...]
    capacity: Capacity
    moved: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    #: what each node gets: bandwidth before and after, TP and DP predictions
    prediction: tuple[str, ...] = field(default=())

    @property
    def total_min(self) -> float:
        return sum(s.duration_min for s in self.steps)

    @property
    def max_down(self) -> int:
        return max((len(s.down) for s in self.steps), default=0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (schema fabric.plan/1)."""
        steps = []
        for s in self.steps:
            d = asdict(s)
            d["gate"]["command"] = s.gate.command
            steps.append(d)
        return {"schema": "fabric.plan/1", "from": {"name": self.source, "intent_hash":
                                                    self.source_hash},
                "to": {"name": self.target, "intent_hash": self.target_hash},
                "total_min": self.total_min, "max_down": self.max_down,
                "capacity": {**asdict(self.capacity), "fits": self.capacity.fits},
                "nodes": {"moved": list(self.moved), "added": list(self.added),
                          "removed": list(self.removed), "unchanged": list(self.unchanged)},
                "notes": list(self.notes), "prediction": list(self.prediction),
                "steps": steps}
