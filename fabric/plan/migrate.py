"""Plan a migration between two topologies as ordered, gated steps.

The order is chosen greedily so that as few nodes as possible are down at once: a node
moves alone when its new port is free and its port group needs no restart with other
nodes on it; idle port groups are reconfigured between node moves; new nodes join last.
"""

from __future__ import annotations

from fabric.intent.model import Intent, Link
from fabric.plan import data
from fabric.plan.cables import CableBook, key
from fabric.plan.capacity import capacity_of
from fabric.plan.env import env_changes
from fabric.plan.model import AddressChange, CableAction, Gate, Plan, Step
from fabric.plan.predict import prediction
from fabric.plan.switchcmd import mode_commands, port_of, prep_commands
from fabric.plan.waves import (
    Rewire,
    addr_changes,
    cable_ends,
    undo_cables,
    wave_minutes,
    wave_rollback,
)


def plan_migration(src: Intent, dst: Intent) -> Plan:
    """The runbook from `src` to `dst` (both statically checked intents)."""
    return _Planner(src, dst).run()


def _hosts(link: Link) -> set[str]:
    return {link.a.host, link.b.host}


class _Planner:
    def __init__(self, src: Intent, dst: Intent) -> None:
        self.src, self.dst = src, dst
        src_links = {key(link): link for link in src.links}
        dst_links = {key(link): link for link in dst.links}
        self.dst_keys = set(dst_links)
        self.removed = [v for k, v in src_links.items() if k not in dst_links]
        self.added = [v for k, v in dst_links.items() if k not in src_links]
        self.present = dict(src_links)
        self.book = CableBook(src, dst, self.removed, self.added)
        a = [h.name for h in src.sparks]
        b = [h.name for h in dst.sparks]
        self.new_nodes = [n for n in b if n not in a]
        self.gone_nodes = [n for n in a if n not in b]
        self.moved = [n for n in b if n in a and self._changed(n)]
        self.unchanged = [n for n in b if n in a and n not in self.moved]
        self.serving = set(a)
        same_switch = bool(src.switch and dst.switch and src.switch.host == dst.switch.host)
        self.modes: dict[str, str] = dict(src.switch.port_modes) if (
            same_switch and src.switch) else {}
        self.pending_ports = {p: m for p, m in (dst.switch.port_modes.items() if dst.switch
                                                else []) if self.modes.get(p) != m}
        self.steps: list[Step] = []
        self.deferred: list[Link] = []

    def _changed(self, host: str) -> bool:
        a = sorted(key(link) for link in self.src.links_of(host))
        b = sorted(key(link) for link in self.dst.links_of(host))
        return a != b or any(not c.kept for c in addr_changes(self.src, self.dst, host))

    # --- state helpers -------------------------------------------------------------------
    def _occupied(self) -> set[str]:
        return {str(e) for link in self.present.values() for e in link.ends()}

    def _on_port(self, port: str) -> set[str]:
        sw = self.dst.switch
        hosts: set[str] = set()
        for link in self.present.values():
            if sw and link.switch_lane and port_of(self.dst, link) == port:
                hosts |= _hosts(link) - {sw.host}
        return hosts

    def _add(self, step: Step) -> None:
        self.steps.append(step)

    def _serving_now(self, down: set[str]) -> tuple[str, ...]:
        return tuple(sorted(self.serving - down))

    # --- the plan ------------------------------------------------------------------------
    def run(self) -> Plan:
        self._precheck()
        self._switch_prep()
        pending = [*self.moved, *self.gone_nodes]
        while pending:
            node = min(pending, key=lambda n: self._score(n, pending))
            pending.remove(node)
            self._wave(node, pending)
            self._idle_ports(pending)
        if self.new_nodes:
            self._join()
        self._launch_env()
        self._final()
        return Plan(self.src.name, self.dst.name, self.src.intent_hash, self.dst.intent_hash,
                    tuple(self.steps), capacity_of(self.dst), tuple(self.moved),
                    tuple(self.new_nodes), tuple(self.gone_nodes), tuple(self.unchanged),
                    tuple(self._notes()), tuple(prediction(self.src, self.dst)))

    def _notes(self) -> list[str]:
        notes = ["serving = the node runs its own (DP) server behind the balancer; the TP "
                 "group across nodes forms again after the launch environment step",
                 "durations are estimates from fabric/plan/plan.yaml"]
        kept = [n for n in self.moved if all(c.kept for c in
                                             addr_changes(self.src, self.dst, n)
                                             if c.after is not None)]
        if kept:
            notes.append(f"addresses kept (checked against both intents): {', '.join(kept)}")
        return notes

    def _score(self, node: str, pending: list[str]) -> tuple[int, int, int, int, str]:
        old = [lk for lk in self.present.values() if node in _hosts(lk)]
        busy = self._occupied() - {str(e) for lk in old for e in lk.ends()}
        new = [lk for lk in self.added if node in _hosts(lk) and key(lk) not in self.present]
        blocked = sum(1 for lk in new if any(str(e) in busy for e in lk.ends()))
        bounce = self._bounced(node, new)
        gone = 1 if node in self.gone_nodes else 0
        nid = self.src.hosts[node].node_id or 0
        return (blocked, len(bounce), gone, nid, node)

    def _ports_for(self, links: list[Link]) -> list[str]:
        ports = {port_of(self.dst, lk) for lk in links}
        return sorted(p for p in ports if p and p in self.pending_ports)

    def _bounced(self, node: str, new: list[Link]) -> set[str]:
        out: set[str] = set()
        for port in self._ports_for(new):
            out |= self._on_port(port) - {node}
        return out

    def _precheck(self) -> None:
        fams = data.gate_families("precheck")
        if self.src.kind == "ring":
            fams += data.gate_families("precheck_ring_extra")
        hosts = [h.name for h in self.src.sparks]
        sw = self.src.switch
        actions = [f"run the gate against {self.src.name}; keep the report as the baseline "
                   "(bandwidth per link included)",
                   "back up each Spark's netplan: `sudo tar czf /var/backups/fabric-netplan.tgz "
                   "/etc/netplan`"]
        if sw:
            actions.append(f"back up {sw.host}: `/export terse file=pre-migration`")
        actions.append(f"check stock: {self._stock()}")
        self._add(Step(1, "precheck", "Pre-checks and backups", (), tuple(sorted(hosts)),
                       data.duration("precheck"), Gate(fams, self.src.name),
                       ("nothing to undo: read-only",), actions=tuple(actions)))

    def _stock(self) -> str:
        kinds: dict[str, int] = {}
        groups: set[str] = set()
        for link in self.added:
            if key(link) in self.book.reuse:
                continue
            group = self.book.group_label(link)
            if group and (group in groups or group in self.book.installed):
                continue
            groups.add(group)
            kinds[link.cable] = kinds.get(link.cable, 0) + 1
        reused = len(self.book.reuse)
        parts = [f"{n} x {k}" for k, n in sorted(kinds.items())] or ["no new cables"]
        return ", ".join(parts) + (f"; {reused} cables reused in place" if reused else "")

    def _switch_prep(self) -> None:
        dst = self.dst
        if dst.switch is None:
            return
        new_switch = not self.modes
        ports = sorted(p for p in self.pending_ports if not self._on_port(p))
        if not new_switch and not ports:
            return
        cmds = prep_commands(dst) if new_switch else []
        cables: list[CableAction] = []
        for port in ports:
            cmds += mode_commands(dst, port, self.modes.get(port))
            self.modes[port] = self.pending_ports.pop(port)
            cables += self.book.install(port)
        ups = dst.hosts[dst.switch.host].ups
        actions = [f"{dst.switch.host} carries no serving node on these ports: no downtime"]
        if new_switch:
            actions.insert(0, f"rack and power {dst.switch.host} ({ups}); connect its "
                           "management port")
        dur = data.duration("switch_prep") + data.duration("cable_end") * len(cables)
        rollback = ["unplug the cables installed above" if cables else "no cables to undo",
                    f"restore {dst.switch.host}: `/import pre-migration.rsc` (or reset the "
                    "ports to auto-negotiation)"]
        self._add(Step(len(self.steps) + 1, "switch-prep", f"Prepare {dst.switch.host} before "
                       "any downtime", (), self._serving_now(set()), dur,
                       Gate(data.gate_families("switch_prep"), dst.name, (dst.switch.host,)),
                       tuple(rollback), actions=tuple(actions), cables=tuple(cables),
                       switch_commands=tuple(cmds)))

    def _wave(self, node: str, pending: list[str]) -> None:
        """One node's step: drain it, re-cable (and re-mode its ports), re-address, gate."""
        rw = self._rewire(node, pending)
        gone = node in self.gone_nodes
        addrs = [] if gone else addr_changes(self.src, self.dst, node)
        down = {node} | rw.bounced
        fams = data.gate_families("bounce" if gone else "node")
        gate_hosts = tuple(sorted(({node} if not gone else set()) | rw.bounced))
        targets = sorted({str(lk.peer_of(node)) for lk in self.dst.links_of(node)})
        title = (f"Decommission {node}" if gone else f"Move {node} to {', '.join(targets)}")
        if gone:
            self.serving.discard(node)
        self._add(Step(len(self.steps) + 1, "decommission" if gone else "move", title,
                       tuple(sorted(down)), self._serving_now(down),
                       wave_minutes(rw, bool(addrs)),
                       Gate(fams, self.dst.name, gate_hosts),
                       tuple(wave_rollback(node, rw, bool(addrs))),
                       bounced=tuple(sorted(rw.bounced)),
                       actions=tuple(self._wave_actions(node, rw, addrs)),
                       cables=tuple(rw.cables), switch_commands=tuple(rw.commands),
                       addresses=tuple(addrs)))

    def _rewire(self, node: str, pending: list[str]) -> Rewire:
        """Move `node`'s cables from the source layout to the target one, switching the
        ports they need to their new mode; plug what was waiting for a free port."""
        old = [lk for lk in self.present.values() if node in _hosts(lk)
               and key(lk) not in self.dst_keys]
        new = [lk for lk in self.added if node in _hosts(lk) and key(lk) not in self.present]
        for lk in old:
            del self.present[key(lk)]
        occupied = self._occupied()
        plug = [lk for lk in new if not any(str(e) in occupied for e in lk.ends())]
        plugging = {key(lk) for lk in plug}
        rw = Rewire(old, self._bounced(node, new), self._ports_for(new))
        for lk in old:
            rw.cables += self.book.unplug(lk, plugging)
        for port in rw.ports:
            rw.commands += mode_commands(self.dst, port, self.modes.get(port))
            if self.src.switch and port in self.src.switch.port_modes:
                rw.undo_commands.append(f"set {port} back to {self.modes.get(port)} (commands "
                                        "as in the pre-check export)")
            self.modes[port] = self.pending_ports.pop(port)
            rw.cables += self.book.install(port)
        for lk in plug:
            rw.cables += self.book.plug(lk)
            self.present[key(lk)] = lk
        self.deferred += [lk for lk in new if key(lk) not in plugging]
        rw.cables += self._plug_deferred(pending)
        return rw

    def _wave_actions(self, node: str, rw: Rewire, addrs: list[AddressChange]) -> list[str]:
        """What the operator does, in order: drain, what else goes down, re-address, undrain."""
        gone = node in self.gone_nodes
        affected = sorted({h for lk in rw.old for h in _hosts(lk)} - {node} - rw.bounced
                          - {self.src.switch.host if self.src.switch else ""})
        actions = [f"drain {node}: take it out of the balancer, stop its server"]
        if rw.bounced:
            actions.append(f"port group restart on {', '.join(rw.ports)} bounces "
                           f"{', '.join(sorted(rw.bounced))} (links drop for ~"
                           f"{data.duration('bounce'):g} min)")
        if affected:
            verb = "loses" if len(affected) == 1 else "lose"
            actions.append(f"{', '.join(affected)} {verb} a fabric link but keep"
                           f"{'s' if len(affected) == 1 else ''} serving")
        if addrs:
            same = all(c.kept for c in addrs if c.after is not None)
            actions.append(f"re-address {node}: " + ("rail addresses unchanged; write the new "
                           "netplan" if same else "write the new netplan") +
                           ", `sudo netplan apply`; no default route on fabric netdevs")
        if gone:
            actions.append(f"{node} leaves the fabric: unconfigure its fabric netdevs")
        else:
            actions.append(f"undrain {node} when the gate passes")
        return actions

    def _plug_deferred(self, pending: list[str]) -> list[CableAction]:
        out: list[CableAction] = []
        for lk in list(self.deferred):
            occupied = self._occupied()
            if any(str(e) in occupied for e in lk.ends()) or _hosts(lk) & set(pending):
                continue
            out += self.book.plug(lk)
            self.present[key(lk)] = lk
            self.deferred.remove(lk)
        return out

    def _idle_ports(self, pending: list[str]) -> None:
        ports = sorted(p for p in self.pending_ports if not self._on_port(p)
                       and not any(port_of(self.dst, lk) == p for lk in self.added
                                   if _hosts(lk) & set(pending)))
        if not ports or self.dst.switch is None:
            return
        cmds: list[str] = []
        cables: list[CableAction] = []
        for port in ports:
            cmds += mode_commands(self.dst, port, self.modes.get(port))
            self.modes[port] = self.pending_ports.pop(port)
            cables += self.book.install(port)
        sw = self.dst.switch.host
        dur = data.duration("port_mode") * len(ports) + data.duration("cable_end") * len(cables)
        self._add(Step(len(self.steps) + 1, "port-mode", f"Re-mode idle {', '.join(ports)} "
                       f"on {sw}", (), self._serving_now(set()), dur,
                       Gate(data.gate_families("switch_prep"), self.dst.name, (sw,)),
                       ("unplug the cables installed above; set the ports back as in the "
                        "pre-check export",),
                       actions=(f"no node is cabled to {', '.join(ports)}: no one bounces",),
                       cables=tuple(cables), switch_commands=tuple(cmds)))

    def _join(self) -> None:
        cables: list[CableAction] = []
        cmds: list[str] = []
        for port in sorted(self.pending_ports):
            cmds += mode_commands(self.dst, port, self.modes.get(port))
            self.modes[port] = self.pending_ports.pop(port)
            cables += self.book.install(port)
        addrs: list[AddressChange] = []
        for node in self.new_nodes:
            for lk in self.added:
                if node in _hosts(lk) and key(lk) not in self.present:
                    cables += self.book.plug(lk)
                    self.present[key(lk)] = lk
            addrs += addr_changes(self.src, self.dst, node)
        nodes = ", ".join(self.new_nodes)
        actions = (f"new nodes {nodes}: check OS, driver and NIC firmware match the others",
                   "cable each new node as listed, write its netplan, `sudo netplan apply`",
                   "add them to the balancer when the gate passes")
        dur = (data.duration("node_join") * len(self.new_nodes)
               + data.duration("cable_end") * cable_ends(cables))
        self.serving |= set(self.new_nodes)
        self._add(Step(len(self.steps) + 1, "join", f"Join {nodes}", (),
                       self._serving_now(set(self.new_nodes)), dur,
                       Gate(data.gate_families("join"), self.dst.name, tuple(self.new_nodes)),
                       (*undo_cables(cables), "take the new nodes out of the balancer"),
                       actions=actions, cables=tuple(cables), switch_commands=tuple(cmds),
                       addresses=tuple(addrs)))

    def _launch_env(self) -> None:
        changes = env_changes(self.src, self.dst)
        if not changes:
            return
        actions = [f"{c.name}: {c.before or '(unset)'} -> {c.after or '(unset)'}"
                   for c in changes]
        if self.src.kind == "ring" and self.dst.kind != "ring":
            actions.insert(0, "leaving the ring: drop NCCL_ALGO=Ring and the ring's NIC "
                           "settings (NCCL_IB_MERGE_NICS, NCCL_NET_PLUGIN); subnet-aware "
                           "routing stays (NVIDIA sets it behind a switch too); the switch "
                           "forwards, the Sparks no longer do")
        actions.append("rehearse: `fabric launch rehearse`, then relaunch the TP group")
        self._add(Step(len(self.steps) + 1, "launch-env", "Change the launch environment", (),
                       self._serving_now(set()), data.duration("launch_env"),
                       Gate(data.gate_families("launch_env"), self.dst.name),
                       ("restore the previous launch environment file and relaunch",),
                       actions=tuple(actions), env=tuple(changes)))

    def _final(self) -> None:
        fams = data.gate_families("final")
        actions = [f"run the full gate against {self.dst.name}; compare bandwidth with the "
                   "baseline (a re-cabled link can stay at 8-25 Gb/s until reboot)",
                   "nccl-tests all_reduce -b 512M -e 4G -f 2 across all nodes"]
        if self.src.switch and not self.dst.switch:
            actions.append(f"power down {self.src.switch.host} once nothing is cabled to it")
        self._add(Step(len(self.steps) + 1, "final", "Final validation", (),
                       self._serving_now(set()), data.duration("final_validation"),
                       Gate(fams, self.dst.name),
                       ("if it fails: roll back the failing node's step, or the whole plan "
                        "in reverse order",), actions=tuple(actions)))
