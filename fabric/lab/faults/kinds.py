"""The fault kinds (KIND -> inject, undo) and the two things done with them: `inject` one
and record it, `heal` them all, newest first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.lab import ns
from fabric.lab.faults import address, drop, hostfiles, link, pcie, recable, services
from fabric.lab.faults.records import (
    AutonegUndo,
    DefaultRouteUndo,
    DegradeUndo,
    DropUndo,
    Fault,
    FlapUndo,
    ImageDriftUndo,
    LinkDownUndo,
    MtuUndo,
    NmProfileUndo,
    PcieWidthUndo,
    RemoveIpcUndo,
    SshdStopUndo,
    SwapUndo,
    TimeUndo,
    UndoRecord,
    WrongAddrUndo,
)
from fabric.lab.faults.state import active_faults, save_faults
from fabric.lab.faults.targets import Ctx
from fabric.lab.lifecycle import registry

R = TypeVar("R", bound=UndoRecord)
Inject = Callable[[Ctx, str], Fault]
Undo = Callable[[Ctx, UndoRecord], None]


def typed(record: type[R], undo: Callable[[Ctx, R], None]) -> Undo:
    """`undo` taking any record, and refusing one that is not a `record`."""
    def checked(ctx: Ctx, u: UndoRecord) -> None:
        if not isinstance(u, record):
            raise ns.LabError(f"a {type(u).__name__} cannot undo a {record.KIND} fault")
        undo(ctx, u)

    return checked


KINDS: dict[str, tuple[Inject, Undo]] = {
    "mtu": (link.mtu, typed(MtuUndo, link.undo_mtu)),
    "link-down": (link.link_down, typed(LinkDownUndo, link.undo_link_down)),
    "swap": (recable.swap, typed(SwapUndo, recable.undo_swap)),
    "degrade": (link.degrade, typed(DegradeUndo, link.undo_degrade)),
    "autoneg": (link.autoneg, typed(AutonegUndo, link.undo_autoneg)),
    "wrong-addr": (address.wrong_addr, typed(WrongAddrUndo, address.undo_wrong_addr)),
    "default-route": (address.default_route,
                      typed(DefaultRouteUndo, address.undo_default_route)),
    "sshd-stop": (services.sshd_stop, typed(SshdStopUndo, services.undo_sshd_stop)),
    "flap": (link.flap, typed(FlapUndo, link.undo_flap)),
    "drop": (drop.drop, typed(DropUndo, drop.undo_drop)),
    "time": (services.time, typed(TimeUndo, services.undo_time)),
    "nm-profile": (hostfiles.nm_profile, typed(NmProfileUndo, hostfiles.undo_file)),
    "remove-ipc": (hostfiles.remove_ipc, typed(RemoveIpcUndo, hostfiles.undo_file)),
    "image-drift": (hostfiles.image_drift, typed(ImageDriftUndo, hostfiles.undo_file)),
    "pcie-width": (pcie.pcie_width, typed(PcieWidthUndo, pcie.undo_pcie_width)),
}


def context(lab: str) -> Ctx:
    info = registry.load_lab(lab)
    return Ctx(info, load_intent(info.topology_path, info.inventory_dir))


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputError(f"unknown fault {kind!r}; faults: {', '.join(KINDS)}")


def inject(lab: str, kind: str, target: str) -> Fault:
    """Inject fault `kind` at `target` in lab `lab` and record it."""
    check_kind(kind)
    ctx = context(lab)
    recorded = active_faults(lab)  # a record that cannot be read fails before the fault
    fault = KINDS[kind][0](ctx, target)
    save_faults(lab, [*recorded, fault])
    return fault


def heal(lab: str) -> list[Fault]:
    """Undo every recorded fault, newest first; the ones healed."""
    ctx = context(lab)
    faults = active_faults(lab)
    healed: list[Fault] = []
    while faults:
        fault = faults[-1]
        ctx = context(lab)  # pids may have changed (sshd, lldpd restarts)
        KINDS[fault.kind][1](ctx, fault.undo)
        faults.pop()
        save_faults(lab, faults)
        healed.append(fault)
    return healed
