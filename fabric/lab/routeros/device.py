"""The emulated switch: configuration (state file) joined with the kernel it drives.

Link training: a change of speed, FEC or auto-negotiation (or re-enabling a lane, or the port
group restart that enabling/disabling a sibling causes) records a deadline in the lane's
``training_until``. Whoever made the change (API server or SSH CLI process) takes the lane's
netdev down at once, so the far end loses carrier; the API server's trainer thread
(``run_trainer``) brings it back up when the deadline passes. Until then the lane reads
``no-link``, not running, and not disabled.

What the switch observes (LLDP neighbours, link up/down times) comes from ``observations``:
the API server's own ``observed.Observations`` once it runs, else the sidecar it writes next to
the state file (so the SSH CLI sees the same). ``clock`` is the switch's clock for both.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from .active import ActiveUsers
from .backend import Backend, KernelCounters, KernelLink
from .clock import Clock
from .linkmodel import Negotiated, negotiate, shaping_mbit
from .observed import Observed, ObservedSource, Sidecar, sidecar_path
from .platform import CRS804, Platform
from .state import Bridge, Ether, Lane, State, StateFile

log = logging.getLogger(__name__)

DEFAULT_LINE_RATE_MBIT = 10000
#: Fields whose change makes the PHY train again.
TRAINING_FIELDS = ("speed", "auto_negotiation", "fec_mode")
#: How often the trainer looks at the state file for deadlines another process wrote.
TRAINER_POLL_S = 0.1


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
    training: bool = False


@dataclass(frozen=True)
class EtherView:
    """The copper management port: configuration from state, carrier and MAC from the kernel."""

    ether: Ether
    running: bool
    disabled: bool
    mac: str


def training(lane: Lane) -> bool:
    """The emulator holds this lane down while its PHY trains (until the trainer clears it)."""
    return lane.training_until > 0 and not lane.disabled


class Device:
    """One emulated CRS804; thread-safe, re-reads state and kernel on every request."""

    def __init__(
        self,
        state_file: StateFile,
        backend: Backend,
        line_rate_mbit: int = DEFAULT_LINE_RATE_MBIT,
        platform: Platform = CRS804,
        training_s: float | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.state_file = state_file
        self.backend = backend
        self.line_rate_mbit = line_rate_mbit
        self.platform = platform
        self._training_s = training_s
        self._lock = threading.RLock()
        self.clock = clock
        self.observations: ObservedSource = Sidecar(sidecar_path(state_file.path))
        #: the API sessions logged in to this process (``/user/active``)
        self.active_users = ActiveUsers()
        self.started = time.time()

    def load(self) -> State:
        return self.state_file.load()

    def now(self) -> float:
        """The switch's clock (epoch seconds)."""
        return self.clock()

    def observed(self) -> Observed:
        """LLDP neighbours and link times, as the API server observed them."""
        return self.observations.observed()

    @contextlib.contextmanager
    def edit(self) -> Iterator[State]:
        """Locked read-modify-write of the state file."""
        with self._lock, self.state_file.edit() as state:
            yield state

    def links(self) -> dict[str, KernelLink]:
        return self.backend.links()

    def counters(self) -> dict[str, KernelCounters]:
        return self.backend.counters()

    def training_delay(self, state: State) -> float:
        """This process's delay if it was given one, else the one the API server recorded."""
        return state.training_s if self._training_s is None else self._training_s

    def lane_view(self, lane: Lane, links: dict[str, KernelLink]) -> LaneView:
        result = negotiate(lane)
        link = links.get(lane.name) if lane.cable_gbps > 0 else None
        if link is None:
            return LaneView(lane, False, False, lane.disabled, lane.mtu, lane.mac_address, result)
        held = training(lane)
        held_down = held or not result.link  # the emulator itself downed it: not "disabled"
        disabled = lane.disabled if held_down else not link.admin_up
        running = link.admin_up and link.carrier and result.link and not held
        return LaneView(
            lane, True, running, disabled, link.mtu, link.mac or lane.mac_address, result, held
        )

    def ether_view(self, ether: Ether, links: dict[str, KernelLink]) -> EtherView:
        link = links.get(ether.name)
        if link is None:
            return EtherView(ether, False, ether.disabled, ether.mac_address)
        disabled = ether.disabled or not link.admin_up
        running = not disabled and link.carrier
        return EtherView(ether, running, disabled, link.mac or ether.mac_address)

    # --- changes that reach the kernel -------------------------------------------------------

    def apply_lane(
        self, state: State, before: Lane, after: Lane, links: dict[str, KernelLink]
    ) -> None:
        """Push a lane's changed settings to its netdev (MTU, admin state, shaping, training).

        ``after`` is the lane object kept in ``state``; its ``training_until`` is set here.
        """
        link = links.get(after.name) if after.cable_gbps > 0 else None
        if link is None:
            return
        if after.mtu != before.mtu and after.mtu != link.mtu:
            self.backend.set_mtu(after.name, after.mtu)
        retrain = any(getattr(before, f) != getattr(after, f) for f in TRAINING_FIELDS) or (
            before.disabled and not after.disabled
        )
        if retrain:
            self._start_training(state, after)
        if after.disabled or not negotiate(after).link:
            after.training_until = 0.0
        if retrain or before.disabled != after.disabled:
            self._reconcile_phy(after, link)
        if before.disabled != after.disabled:
            self._restart_port_group(state, after, links)

    def _start_training(self, state: State, lane: Lane) -> None:
        delay = self.training_delay(state)
        if delay > 0 and not lane.disabled and negotiate(lane).link:
            lane.training_until = time.time() + delay

    def _restart_port_group(
        self, state: State, changed: Lane, links: dict[str, KernelLink]
    ) -> None:
        """Enabling/disabling one sub-interface restarts its whole QSFP56-DD port (CRS804):
        every other cabled, enabled lane of the port trains again (or bounces, without delay)."""
        group = changed.name.rsplit("-", 1)[0] + "-"
        for lane in state.lanes:
            link = links.get(lane.name) if lane.cable_gbps > 0 else None
            if not lane.name.startswith(group) or lane.name == changed.name or link is None:
                continue
            if lane.disabled or not negotiate(lane).link:
                continue
            self._start_training(state, lane)
            if lane.training_until > 0:
                if link.admin_up:
                    self.backend.set_admin(lane.name, False)
            elif link.admin_up:
                self.backend.set_admin(lane.name, False)
                self.backend.set_admin(lane.name, True)

    def _reconcile_phy(self, lane: Lane, link: KernelLink) -> None:
        want_up = not lane.disabled and negotiate(lane).link and not training(lane)
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

    def attach(
        self, interface: str, bridge: str | None, links: dict[str, KernelLink] | None = None
    ) -> None:
        """Enslave a cabled lane's netdev to a bridge (None: release it). The management port
        is a bridge port only in the emulator's state: enslaving the lab's management netdev
        would cut the lab off."""
        if interface in self.platform.ether_ports:
            return
        links = self.links() if links is None else links
        known = interface in links and (bridge is None or bridge in links)
        if known and links[interface].master != bridge:
            self.backend.set_master(interface, bridge)

    def reconcile(self) -> None:
        """Make the kernel match the whole configuration (at start-up; it never starts
        training: lanes come up at their cable's rate)."""
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
            links = self.links()
            for port in state.bridge_ports:
                if not port.disabled:
                    self.attach(port.interface, port.bridge, links)

    def record_settings(self) -> None:
        """Write the server's training delay and line rate into the state, for the SSH CLI."""
        with self.edit() as state:
            state.training_s = self.training_delay(state)
            state.line_rate_mbit = self.line_rate_mbit

    # --- the trainer -------------------------------------------------------------------------

    def training_step(self, now: float | None = None) -> float | None:
        """Keep training lanes down; bring up those whose deadline passed. The next deadline
        still pending, or None when no lane trains."""
        now = time.time() if now is None else now
        state = self.load()
        pending = [lane for lane in state.lanes if training(lane)]
        if not pending:
            if any(lane.training_until > 0 for lane in state.lanes):  # disabled meanwhile
                with self.edit() as state:
                    for lane in state.lanes:
                        if lane.disabled:
                            lane.training_until = 0.0
            return None
        links = self.links()
        for lane in pending:  # another process may have started it without reaching the kernel
            link = links.get(lane.name) if lane.cable_gbps > 0 else None
            if lane.training_until > now and link is not None and link.admin_up:
                self.backend.set_admin(lane.name, False)
        if any(lane.training_until <= now for lane in pending):
            with self.edit() as state:
                links = self.links()
                for lane in state.lanes:
                    if 0 < lane.training_until <= now:
                        lane.training_until = 0.0  # written after the netdev is up again
                        link = links.get(lane.name) if lane.cable_gbps > 0 else None
                        if link is not None:
                            self._reconcile_phy(lane, link)
                pending = [lane for lane in state.lanes if training(lane)]
        deadlines = [lane.training_until for lane in pending if lane.training_until > now]
        return min(deadlines) if deadlines else None

    def run_trainer(self, stop: threading.Event, poll_s: float = TRAINER_POLL_S) -> None:
        """Until ``stop``: act on every change of the state file and on every deadline."""
        seen: tuple[int, int, int] | None = None
        due: float | None = None
        while not stop.is_set():
            try:
                signature = self.state_file.signature()
                if signature != seen or (due is not None and time.time() >= due):
                    seen = signature
                    due = self.training_step()
            except Exception:  # a bad moment (file replaced, ip failed): try again
                log.exception("link training step failed")
                due = time.time() + poll_s
            wait = poll_s if due is None else min(poll_s, max(0.0, due - time.time()))
            stop.wait(wait)

    def uptime_s(self) -> int:
        return int(time.time() - self.started)
