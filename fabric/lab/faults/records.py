"""What a fault did and what `heal` needs to undo it: one typed undo record per fault kind.

A fault is stored in `faults.json` as `{"kind", "target", "summary", "undo": {"type": TAG,
...fields}}`; `Fault.from_json` reads it back and checks that the record fits the kind.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from fabric.lab.faults.codec import RecordError, decode, encode


@dataclass(frozen=True)
class UndoRecord:
    """Base of the undo records. `record["field"]` reads a field as the old dict records did."""

    #: The fault kind the record undoes, and its `type` tag in faults.json.
    KIND: ClassVar[str] = ""
    TAG: ClassVar[str] = ""

    def __getitem__(self, key: str) -> Any:
        if key not in {f.name for f in fields(self)}:
            raise KeyError(key)
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TAG, **encode(self)}


@dataclass(frozen=True)
class MtuUndo(UndoRecord):
    """`mtu`: the lane's kernel MTU before the fault."""

    KIND: ClassVar[str] = "mtu"
    TAG: ClassVar[str] = "mtu"
    host: str
    dev: str
    mtu: int


@dataclass(frozen=True)
class LinkDownUndo(UndoRecord):
    """`link-down`: the cable end set down."""

    KIND: ClassVar[str] = "link-down"
    TAG: ClassVar[str] = "link-down"
    host: str
    dev: str
    #: the far Spark's panel end, set down with it ("" on a cable to the switch)
    far: str = ""


@dataclass(frozen=True)
class Tbf:
    """A root tbf qdisc: rate in bytes/s and burst in bytes, as `tc -j` prints them."""

    rate: int
    burst: int


@dataclass(frozen=True)
class ShapedEnd:
    """One end of a degraded cable and the root tbf it had before (None: none)."""

    host: str
    dev: str
    tbf: Tbf | None


@dataclass(frozen=True)
class DegradeUndo(UndoRecord):
    """`degrade`: each end's root tbf before the fault, in the order they were shaped."""

    KIND: ClassVar[str] = "degrade"
    TAG: ClassVar[str] = "degrade"
    before: tuple[ShapedEnd, ...]


@dataclass(frozen=True)
class SwapUndo(UndoRecord):
    """`swap`: the hosts whose cabling changed; a subclass says how to put it back."""

    KIND: ClassVar[str] = "swap"
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class SwapRenameUndo(SwapUndo):
    """`swap` on a switch: two lanes whose names were exchanged (exchanging them again heals)."""

    TAG: ClassVar[str] = "swap-rename"
    switch: str
    lanes: tuple[str, str]


#: A Spark-to-Spark cable as (host, port, host, port).
Cable = tuple[str, str, str, str]


@dataclass(frozen=True)
class SwapRepairUndo(SwapUndo):
    """`swap` between Sparks: the cables as they were before the re-pairing."""

    TAG: ClassVar[str] = "swap-repair"
    cables: tuple[Cable, ...]


@dataclass(frozen=True)
class AutonegUndo(UndoRecord):
    """`autoneg`: the lane and the speed it was forced to ("" when none was read)."""

    KIND: ClassVar[str] = "autoneg"
    TAG: ClassVar[str] = "autoneg"
    lane: str
    speed: str


@dataclass(frozen=True)
class WrongAddrUndo(UndoRecord):
    """`wrong-addr`: the address taken away and the one put in its place."""

    KIND: ClassVar[str] = "wrong-addr"
    TAG: ClassVar[str] = "wrong-addr"
    host: str
    dev: str
    good: str
    wrong: str


@dataclass(frozen=True)
class Route:
    """A default route as `ip -j route show default` printed it."""

    gateway: str | None
    dev: str | None


@dataclass(frozen=True)
class DefaultRouteUndo(UndoRecord):
    """`default-route`: the host's default routes before the fault."""

    KIND: ClassVar[str] = "default-route"
    TAG: ClassVar[str] = "default-route"
    host: str
    previous: tuple[Route, ...]


@dataclass(frozen=True)
class SshdStopUndo(UndoRecord):
    """`sshd-stop`: the host whose sshd was stopped."""

    KIND: ClassVar[str] = "sshd-stop"
    TAG: ClassVar[str] = "sshd-stop"
    host: str


@dataclass(frozen=True)
class TimeUndo(UndoRecord):
    """`time`: the Spark whose chronyd follows a dead time server."""

    KIND: ClassVar[str] = "time"
    TAG: ClassVar[str] = "time"
    host: str


@dataclass(frozen=True)
class FlapUndo(UndoRecord):
    """`flap`: the bounced cable end and the flapper process bouncing it."""

    KIND: ClassVar[str] = "flap"
    TAG: ClassVar[str] = "flap"
    host: str
    dev: str
    pid: int
    #: the far Spark's panel end, bounced with it ("" on a cable to the switch)
    far: str = ""


@dataclass(frozen=True)
class DropEnd:
    """One sending end of a `drop` fault: a filter on clsact egress (a Spark end; with the
    clsact qdisc itself when the fault added it) or a root htb (a switch lane)."""

    host: str
    dev: str
    at: Literal["clsact", "root"]
    added_qdisc: bool = False


@dataclass(frozen=True)
class DropUndo(UndoRecord):
    """`drop`: the ends that drop frames, in the order they were set up."""

    KIND: ClassVar[str] = "drop"
    TAG: ClassVar[str] = "drop"
    ends: tuple[DropEnd, ...]


@dataclass(frozen=True)
class HostFileUndo(UndoRecord):
    """A file a fault wrote in a lab host's private /etc: its text before (None: absent)."""

    host: str
    path: str
    previous: str | None


@dataclass(frozen=True)
class NmProfileUndo(HostFileUndo):
    """`nm-profile`: the NetworkManager keyfile written for a twin."""

    KIND: ClassVar[str] = "nm-profile"
    TAG: ClassVar[str] = "nm-profile"


@dataclass(frozen=True)
class ImageDriftUndo(HostFileUndo):
    """`image-drift`: the docker stand-in's image list of one Spark."""

    KIND: ClassVar[str] = "image-drift"
    TAG: ClassVar[str] = "image-drift"


@dataclass(frozen=True)
class RemoveIpcUndo(HostFileUndo):
    """`remove-ipc`: the logind drop-in that sets RemoveIPC=yes."""

    KIND: ClassVar[str] = "remove-ipc"
    TAG: ClassVar[str] = "remove-ipc"


@dataclass(frozen=True)
class PcieWidthUndo(UndoRecord):
    """`pcie-width`: the overlay over the twin's sysfs directory, and its lab directory."""

    KIND: ClassVar[str] = "pcie-width"
    TAG: ClassVar[str] = "pcie-width"
    host: str
    netdev: str
    work: str


RECORDS: tuple[type[UndoRecord], ...] = (
    MtuUndo, LinkDownUndo, DegradeUndo, SwapRenameUndo, SwapRepairUndo, AutonegUndo,
    WrongAddrUndo, DefaultRouteUndo, SshdStopUndo, TimeUndo, FlapUndo, DropUndo,
    NmProfileUndo, RemoveIpcUndo, ImageDriftUndo, PcieWidthUndo)
#: faults.json's `type` tag -> record class.
BY_TAG: dict[str, type[UndoRecord]] = {r.TAG: r for r in RECORDS}


def undo_from_json(kind: str, data: Any, where: str = "undo") -> UndoRecord:
    """The undo record of a `kind` fault from its JSON; RecordError when it does not fit."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise RecordError(f"{where}: expected an object with a \"type\" tag, got {data!r:.60}")
    body = {k: v for k, v in data.items() if k != "type"}
    cls = BY_TAG.get(data["type"])
    if cls is None:
        raise RecordError(f"{where}: unknown record type {data['type']!r}; types: "
                          f"{', '.join(BY_TAG)}")
    if kind != cls.KIND:
        raise RecordError(f"{where}: a {cls.TAG} record cannot undo a {kind} fault")
    return decode(cls, body, where)


@dataclass(frozen=True)
class Fault:
    """One injected fault: what, where, what it did, and the record to undo it."""

    kind: str
    target: str
    summary: str
    undo: UndoRecord

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "summary": self.summary,
                "undo": self.undo.to_json()}

    @classmethod
    def from_json(cls, data: Any, where: str = "fault") -> Fault:
        if not isinstance(data, dict):
            raise RecordError(f"{where}: expected an object, got {data!r:.60}")
        missing = [k for k in ("kind", "target", "summary", "undo") if k not in data]
        unknown = sorted(set(data) - {"kind", "target", "summary", "undo"})
        if missing or unknown:
            raise RecordError(f"{where}: " + "; ".join(
                ([f"missing field(s) {', '.join(missing)}"] if missing else []) +
                ([f"unknown field(s) {', '.join(unknown)}"] if unknown else [])))
        texts = {k: data[k] for k in ("kind", "target", "summary")}
        bad = [k for k, v in texts.items() if not isinstance(v, str)]
        if bad:
            raise RecordError(f"{where}: {', '.join(bad)} must be text")
        return cls(texts["kind"], texts["target"], texts["summary"],
                   undo_from_json(texts["kind"], data["undo"], f"{where}.undo"))
