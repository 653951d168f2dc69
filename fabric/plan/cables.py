"""Which physical cable serves which new link, and the hand movements that get it there.

A cable that keeps one end where it is and only moves the other is reused ("move");
breakout legs hang off one cable per switch port; everything else comes from stock.
"""

from __future__ import annotations

from fabric.intent.model import Endpoint, Intent, Link
from fabric.plan.model import CableAction
from fabric.plan.switchcmd import is_breakout, port_of


def key(link: Link) -> str:
    """A link as a cable: the id plus the cable type (same ends, other cable = changed)."""
    return f"{link.id}|{link.cable}"


class CableBook:
    """Decides reuse once, then renders unplug/plug actions as the migration proceeds."""

    def __init__(self, src: Intent, dst: Intent, removed: list[Link], added: list[Link]) -> None:
        self.dst = dst
        self.reuse: dict[str, tuple[Link, Endpoint]] = {}
        self.reused_by: dict[str, Link] = {}
        self.freed: set[str] = set()
        self.installed: set[str] = set()
        src_groups = {self._group(src, link) for link in src.links if is_breakout(src, link)}
        self.installed = {g for g in src_groups if g}
        used: set[str] = set()
        for new in added:
            if is_breakout(dst, new):
                continue
            for old in removed:
                if key(old) in used or old.cable != new.cable or is_breakout(src, old):
                    continue
                shared = {str(e) for e in old.ends()} & {str(e) for e in new.ends()}
                if shared:
                    kept = next(e for e in old.ends() if str(e) in shared)
                    self.reuse[key(new)] = (old, kept)
                    self.reused_by[key(old)] = new
                    used.add(key(old))
                    break

    @staticmethod
    def _group(intent: Intent, link: Link) -> str:
        port = port_of(intent, link)
        return f"{link.cable} @ {intent.switch.host}:{port}" if port and intent.switch else ""

    def group_label(self, link: Link) -> str:
        return self._group(self.dst, link)

    def unplug(self, old: Link, plugging: set[str]) -> list[CableAction]:
        """Actions that take `old` out; a reused cable moves straight to its new port."""
        new = self.reused_by.get(key(old))
        label = f"{old.cable} [{old.id}]"
        if new is None:
            return [CableAction(label, "remove", f"{old.a} + {old.b}", "shelf",
                                "unplug both ends, label it spare")]
        _, kept = self.reuse[key(new)]
        loose = next(e for e in old.ends() if str(e) != str(kept))
        target = next(e for e in new.ends() if str(e) != str(kept))
        if key(new) in plugging:
            return [CableAction(label, "move", str(loose), str(target),
                                f"the {kept} end stays; if the cable does not reach, use a "
                                f"new {new.cable}")]
        self.freed.add(key(new))
        return [CableAction(label, "unplug", str(loose), None,
                            f"leave the {kept} end plugged; the free end goes to {target} later")]

    def plug(self, new: Link) -> list[CableAction]:
        """Actions that put `new` in (nothing if an unplug already moved it there)."""
        if key(new) in self.reuse:
            old, kept = self.reuse[key(new)]
            if key(new) not in self.freed:
                return []
            target = next(e for e in new.ends() if str(e) != str(kept))
            return [CableAction(f"{old.cable} [{old.id}]", "plug", f"free end (at {kept})",
                                str(target), "")]
        if is_breakout(self.dst, new):
            group = self.group_label(new)
            spark = new.a if new.switch_lane == new.b.port else new.b
            return [CableAction(group, "plug", f"leg {self.leg(new)} ({new.switch_lane})",
                                str(spark), "")]
        return [CableAction(f"new {new.cable} [{new.id}]", "plug", str(new.a), str(new.b),
                            "from stock")]

    def leg(self, link: Link) -> int:
        sw = self.dst.switch
        assert sw is not None and link.switch_lane is not None
        port = port_of(self.dst, link)
        lanes = [lane.name for lane in sw.lanes if lane.port == port]
        return lanes.index(link.switch_lane) + 1

    def install(self, port: str) -> list[CableAction]:
        """Put the switch end of the breakout cable for `port` in, legs left free."""
        links = [link for link in self.dst.links
                 if port_of(self.dst, link) == port and is_breakout(self.dst, link)]
        if not links or self.group_label(links[0]) in self.installed:
            return []
        group = self.group_label(links[0])
        self.installed.add(group)
        sw = self.dst.switch
        assert sw is not None
        return [CableAction(group, "plug", "switch end (QSFP56-DD)", f"{sw.host}:{port}",
                            f"{len(links)} legs stay free until each node's step")]
