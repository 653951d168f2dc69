"""``qos/tx-manager``, its queues, and ``qos/priority-flow-control`` (PFC profiles). Emulated
state only. Which properties a queue has follows the chip family: prestera-cpss has no
``use-shared-buffers`` or ``queue-buffers`` (the property table, see ``qos_common``)."""

from __future__ import annotations

from ..device import Device
from ..errors import Trap
from ..qos_state import PfcProfile
from ..state import State
from .base import Reply, Request, Row, pick, target_refs, yes
from .props import Ctx
from .qos_common import QOS, check, has, missing, offloaded, qos_apply, qos_table

TX_MANAGER, QUEUE = f"{QOS}/tx-manager", f"{QOS}/tx-manager/queue"
PFC = f"{QOS}/priority-flow-control"

# --- qos/tx-manager and its queues ----------------------------------------------------------

_QUEUE = qos_table(QUEUE)


def tx_manager_rows(dev: Device) -> list[Row]:
    return [{".id": "*1", "name": "default", "queue-buffers": "auto", "default": "true"}]


def queue_rows(dev: Device) -> list[Row]:
    state = dev.load()
    # a chip without the shared-buffer setting does not gate WRED and ECN on it
    gate = has(state, QUEUE, "use-shared-buffers")
    rows: list[Row] = []
    for q in state.qos.tx_queues:
        row = {".id": q.id, "tx-manager": q.tx_manager, "traffic-class": str(q.traffic_class),
               "schedule": q.schedule}
        if q.schedule != "strict-priority":
            row["weight"] = str(q.weight)
        shared = q.use_shared_buffers or not gate
        row |= {"queue-buffers": q.queue_buffers,
                "use-shared-buffers": yes(q.use_shared_buffers), "wred": yes(q.wred),
                "ecn": yes(q.ecn), "wred-actual": yes(q.wred and shared),
                "ecn-actual": yes(q.ecn and shared), "default": "false", "inactive": "false",
                "hw-offloaded": offloaded(state)}
        rows.append(row)
    return rows


def queue_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, QUEUE)
        args = {k: v for k, v in req.args.items() if k in _QUEUE}
        for q in pick(state.qos.tx_queues, target_refs(req), lambda x: (x.id, "")):
            qos_apply(_QUEUE, dev, state, q, args)
    return Reply()


# --- qos/priority-flow-control --------------------------------------------------------------

def _pfc_name(ctx: Ctx, prop: str, value: str) -> str:
    if value != ctx.item.name and ctx.state.qos.pfc_profile(value) is not None:
        raise Trap("failure: profile with such name already exists")
    return value


_PFC = qos_table(PFC, _pfc_name)


def pfc_rows(dev: Device) -> list[Row]:
    state = dev.load()
    rows: list[Row] = []
    for p in state.qos.pfc:
        row = {".id": p.id, "name": p.name}
        if not p.builtin:
            row |= {"traffic-class": p.traffic_class, "rx": yes(p.rx), "tx": yes(p.tx),
                    "pause-threshold": p.pause_threshold,
                    "resume-threshold": p.resume_threshold}
        row |= {"default": yes(p.builtin), "disabled": "false", "inactive": "false",
                "hw-offloaded": offloaded(state)}
        rows.append(row)
    return rows


def _pfc_args(dev: Device, state: State, p: PfcProfile, args: dict[str, str]) -> None:
    if p.builtin:
        raise Trap("failure: cannot change the built-in profile")
    qos_apply(_PFC, dev, state, p, args)


def pfc_add(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PFC, ids=False)
        for arg in ("name", "traffic-class"):
            if not req.args.get(arg):
                raise missing(arg)
        if state.qos.pfc_profile(req.args["name"]) is not None:
            raise Trap("failure: profile with such name already exists")
        p = PfcProfile(id=state.qos.new_id(), name=req.args["name"])
        _pfc_args(dev, state, p, dict(req.args))
        state.qos.pfc.append(p)
    return Reply(ret=p.id)


def pfc_set(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PFC)
        args = {k: v for k, v in req.args.items() if k in _PFC}
        for p in pick(state.qos.pfc, target_refs(req), lambda x: (x.id, x.name)):
            old = p.name
            _pfc_args(dev, state, p, args)
            for port in state.qos.ports:
                port.pfc = p.name if port.pfc == old else port.pfc
    return Reply()


def pfc_remove(dev: Device, req: Request) -> Reply:
    with dev.edit() as state:
        check(req, state, PFC, ())
        for p in pick(state.qos.pfc, target_refs(req), lambda x: (x.id, x.name)):
            if p.builtin:
                raise Trap("failure: cannot remove the built-in profile")
            if any(port.pfc == p.name for port in state.qos.ports):
                raise Trap(f"failure: profile {p.name} is in use")
            state.qos.pfc.remove(p)
    return Reply()
