"""`drop TARGET[@rx|@tx|@both][,PCT%]`: the cable loses a share of its frames.

The default is DROP_PERCENT both ways; `rx`/`tx` as seen from the end TARGET names (the lane
for a bare lane, `host` for `host:port`, the first end of a link id). A classic-BPF program
(bpf.drop_bytecode) drops them where the sending end queues them:

- a Spark end sends: on `clsact` egress of its hidden cable end, so the twin's transmit fails
  and the kernel counts it in the twin's `tx_dropped` (`ip -s link`: counters.drops "kernel
  drops");
- a switch lane sends: in a root `htb` of the lane, so the root qdisc counts it and the
  emulator prints it as the lane's `tx-queue-drop` (counters.drops "interface drops").
"""

from __future__ import annotations

from fabric.lab import ns
from fabric.lab.faults.bpf import drop_bytecode
from fabric.lab.faults.kernel import qdiscs
from fabric.lab.faults.records import DropEnd, DropUndo, Fault
from fabric.lab.faults.targets import Ctx, cable_end, drop_senders, drop_spec, resolve_link

#: Filter priority of the drop filter on a Spark's clsact egress (its handle in heal).
DROP_PREF = 49


def drop_at_spark(netns: str, host: str, dev: str, bytecode: str) -> DropEnd:
    """Drop on clsact egress of a Spark's hidden cable end: the twin's transmit fails."""
    tc = ns.in_ns(netns, ["tc"])
    have = any(q.get("kind") == "clsact" for q in qdiscs(netns, dev))
    if have and ns.run([*tc, "filter", "show", "dev", dev, "egress", "pref", str(DROP_PREF)]):
        raise ns.LabError(f"{dev} already drops frames; `fabric lab heal` first")
    if not have:
        ns.run([*tc, "qdisc", "add", "dev", dev, "clsact"])
    ns.run([*tc, "filter", "add", "dev", dev, "egress", "pref", str(DROP_PREF), "bpf",
            "bytecode", bytecode, "da"])
    return DropEnd(host=host, dev=dev, at="clsact", added_qdisc=not have)


def drop_at_lane(netns: str, host: str, dev: str, bytecode: str) -> DropEnd:
    """Drop in a root htb of a switch lane (no classes: what passes is sent unshaped), so
    the root qdisc counts every drop (RouterOS tx-queue-drop)."""
    root = [q for q in qdiscs(netns, dev) if q.get("root")]
    if root and root[0].get("kind") != "noqueue":
        raise ns.LabError(f"{dev} already has a {root[0].get('kind')} root qdisc (shaped by the "
                          "emulator, or another fault): heal or train the lane first")
    tc = ns.in_ns(netns, ["tc"])
    ns.run([*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb"])
    ns.run([*tc, "filter", "add", "dev", dev, "parent", "1:", "pref", str(DROP_PREF), "bpf",
            "bytecode", bytecode, "da"])
    return DropEnd(host=host, dev=dev, at="root")


def drop(ctx: Ctx, target: str) -> Fault:
    spec, direction, percent = drop_spec(target)
    link, named = resolve_link(ctx, spec)
    bytecode = drop_bytecode(percent)
    ends: list[DropEnd] = []
    done: list[str] = []
    try:
        for ep in drop_senders(link, named, direction):
            end = cable_end(ctx, ep.host, ep.port)
            netns = ctx.netns(end.host)
            if ctx.intent.hosts[end.host].role == "switch":
                ends.append(drop_at_lane(netns, end.host, end.netdev, bytecode))
            else:
                ends.append(drop_at_spark(netns, end.host, end.netdev, bytecode))
            done.append(f"{end.host} {end.netdev} sends")
    except Exception:
        undo_drop(ctx, DropUndo(ends=tuple(ends)))
        raise
    return Fault("drop", target, f"cable {link.id} drops {percent:g} % of the frames "
                 f"{' and '.join(done)}", DropUndo(ends=tuple(ends)))


def undo_drop(ctx: Ctx, u: DropUndo) -> None:
    for e in reversed(u.ends):
        tc = ns.in_ns(ctx.netns(e.host), ["tc"])
        if e.at == "root":
            ns.run([*tc, "qdisc", "del", "dev", e.dev, "root"], check=False)
        elif e.added_qdisc:
            ns.run([*tc, "qdisc", "del", "dev", e.dev, "clsact"], check=False)
        else:
            ns.run([*tc, "filter", "del", "dev", e.dev, "egress", "pref", str(DROP_PREF)],
                   check=False)
