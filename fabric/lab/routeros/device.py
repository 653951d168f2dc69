"""The emulated switch: configuration (state file) joined with the kernel it drives."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .backend import Backend, KernelLink
from .linkmodel import Negotiated, negotiate, shaping_mbit
from .platform import CRS804, Platform
from .state import Bridge, Lane, State, StateFile

DEFAULT_LINE_RATE_MBIT = 10000


@dataclass(frozen=True)
class LaneView:
    """A lane as RouterOS reports it right now (kernel truth for link, MTU and admin state)."""

    lane: Lane
    present: bool
    running: bool
    disabled: bool
    mtu: int
    mac: str
    negotiated: Negotiated


class Device:
    """One emulated CRS804; thread-safe, re-reads state and kernel on every request."""

    def __init__(
        self,
        state_file: StateFile,
        backend: Backend,
        line_rate_mbit: int = DEFAULT_LINE_RATE_MBIT,
        platform: Platform = CRS804,
    ) -> None:
        self.state_file = state_file
        self.backend = backend
        self.line_rate_mbit = line_rate_mbit
        self.platform = platform
        self._lock = threading.RLock()
        self.started = time.time()

    def load(self) -> State:
        return self.state_file.load()

    @contextlib.contextmanager
    def edit(self) -> Iterator[State]:
        """Locked read-modify-write of the state file."""
        with self._lock, self.state_file.edit() as state:
            yield state

    def links(self) -> dict[str, KernelLink]:
        return self.backend.links()

    def lane_view(self, lane: Lane, links: dict[str, KernelLink]) -> LaneView:
        result = negotiate(lane)
        link = links.get(lane.name) if lane.cable_gbps > 0 else None
        if link is None:
            return LaneView(lane, False, False, lane.disabled, lane.mtu, lane.mac_address, result)
        held_down = not result.link  # the emulator itself downed it: not an admin "disabled"
        disabled = lane.disabled if held_down else not link.admin_up
        running = link.admin_up and link.carrier and result.link
        return LaneView(
            lane, True, running, disabled, link.mtu, link.mac or lane.mac_address, result
        )

    # --- changes that reach the kernel -------------------------------------------------------

    def apply_lane(self, before: Lane, after: Lane, links: dict[str, KernelLink]) -> None:
        """Push a lane's changed settings to its netdev (MTU, admin state, shaping)."""
        link = links.get(after.name) if after.cable_gbps > 0 else None
        if link is None:
            return
        if after.mtu != before.mtu and after.mtu != link.mtu:
            self.backend.set_mtu(after.name, after.mtu)
        phy = ("disabled", "speed", "auto_negotiation", "fec_mode")
        if any(getattr(before, f) != getattr(after, f) for f in phy):
            self._reconcile_phy(after, link)
        if before.disabled != after.disabled:
            self._bounce_port_group(after.name, links)

    def _bounce_port_group(self, changed: str, links: dict[str, KernelLink]) -> None:
        """Enabling/disabling one sub-interface restarts its whole QSFP56-DD port (CRS804)."""
        group = changed.rsplit("-", 1)[0] + "-"
        for name, link in links.items():
            if name.startswith(group) and name != changed and link.admin_up:
                self.backend.set_admin(name, False)
                self.backend.set_admin(name, True)

    def _reconcile_phy(self, lane: Lane, link: KernelLink) -> None:
        want_up = not lane.disabled and negotiate(lane).link
        if link.admin_up != want_up:
            self.backend.set_admin(lane.name, want_up)
        self.backend.shape(lane.name, shaping_mbit(lane, self.line_rate_mbit))

    def create_bridge(self, bridge: Bridge) -> None:
        if bridge.name not in self.links():
            self.backend.add_bridge(bridge.name)
        if bridge.disabled:
            self.backend.set_admin(bridge.name, False)

    def delete_bridge(self, name: str) -> None:
        if name in self.links():
            self.backend.del_link(name)

    def attach(self, interface: str, bridge: str | None) -> None:
        """Enslave a cabled lane's netdev to a bridge (None: release it)."""
        links = self.links()
        known = interface in links and (bridge is None or bridge in links)
        if known and links[interface].master != bridge:
            self.backend.set_master(interface, bridge)

    def reconcile(self) -> None:
        """Make the kernel match the whole configuration (at start-up)."""
        with self._lock:
            state = self.load()
            links = self.links()
            for lane in state.lanes:
                link = links.get(lane.name) if lane.cable_gbps > 0 else None
                if link is None:
                    continue
                if link.mtu != lane.mtu:
                    self.backend.set_mtu(lane.name, lane.mtu)
                self._reconcile_phy(lane, replace(link, mtu=lane.mtu))
            for bridge in state.bridges:
                self.create_bridge(bridge)
            for port in state.bridge_ports:
                if not port.disabled:
                    self.attach(port.interface, port.bridge)

    def uptime_s(self) -> int:
        return int(time.time() - self.started)
