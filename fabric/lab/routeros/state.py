"""The emulator's configuration, kept in one JSON file shared by the API server and the SSH CLI.

Every change is written atomically (temp file + ``os.replace``) under an ``fcntl`` lock, and
every request re-reads the file, so two processes always see the same configuration.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabric.intent.platforms import routeros_properties

from .platform import CRS804, DEFAULT_CHIP_FAMILY, DEFAULT_VERSION, LANE_NAMES, Platform
from .qos_state import (
    PfcProfile,
    Qos,
    QosMapIp,
    QosPort,
    QosProfile,
    QosSettings,
    SwitchChip,
    TxQueue,
    default_qos,
)

SCHEMA = "fabric.routeros-state/1"
#: How the state starts: ``/system reset-configuration no-defaults=yes`` (nothing configured),
#: the CRS factory default (one ``bridge`` holding every port, the management address on it), or
#: the factory default after the README's preparation steps (ether1 out of the bridge, the
#: management address on ether1).
NO_DEFAULTS, FACTORY, PREPARED = "no-defaults", "factory", "prepared"
CONFIGS = (NO_DEFAULTS, FACTORY, PREPARED)
FACTORY_BRIDGE = "bridge"
DEFCONF = "defconf"
#: Seconds a lane stays at no-link after a speed, FEC or auto-negotiation change.
DEFAULT_TRAINING_S = 5.0


@dataclass
class Lane:
    """One ``qsfp56-dd-P-L`` sub-interface; ``cable_gbps`` 0 means no cable (no netdev)."""

    id: str
    name: str
    default_name: str
    cable_gbps: int = 0
    speed: str = CRS804.default_speed
    auto_negotiation: bool = True
    advertise: list[str] = field(default_factory=lambda: list(CRS804.default_advertise))
    fec_mode: str = "auto"
    mtu: int = CRS804.default_mtu
    l2mtu: int = CRS804.default_l2mtu
    disabled: bool = False
    mac_address: str = ""
    comment: str = ""
    #: Wall-clock time (``time.time()``) until which the PHY trains (no link); 0: not training.
    training_until: float = 0.0


@dataclass
class Ether:
    """A copper port such as ``ether1``, the management port. The lab's management netdev of the
    same name is read (carrier, MAC) but never changed, so the lab stays reachable."""

    id: str
    name: str
    default_name: str
    mtu: int = CRS804.default_mtu
    l2mtu: int = CRS804.ether_l2mtu
    speed: str = CRS804.ether_speed
    auto_negotiation: bool = True
    advertise: list[str] = field(default_factory=lambda: list(CRS804.ether_advertise))
    disabled: bool = False
    mac_address: str = ""
    comment: str = ""


@dataclass
class IpAddress:
    """One ``/ip/address`` item; emulated only (the kernel's addresses are the lab's own)."""

    id: str
    address: str
    network: str
    interface: str
    disabled: bool = False
    comment: str = ""


@dataclass
class Bridge:
    id: str
    name: str
    mtu: str = "auto"
    disabled: bool = False
    protocol_mode: str = "rstp"
    vlan_filtering: bool = False
    comment: str = ""


@dataclass
class BridgePort:
    id: str
    bridge: str
    interface: str
    hw: bool = True
    disabled: bool = False
    pvid: int = 1
    comment: str = ""


@dataclass
class Discovery:
    protocol: str = "cdp,lldp,mndp"
    lldp_dcbx: bool = False
    discover_interface_list: str = "all"


@dataclass
class State:
    identity: str
    username: str
    password: str
    version: str = DEFAULT_VERSION
    #: the switch chip's family, which decides the properties of its QoS menus' rows
    chip_family: str = DEFAULT_CHIP_FAMILY
    lanes: list[Lane] = field(default_factory=list)
    ethers: list[Ether] = field(default_factory=list)
    bridges: list[Bridge] = field(default_factory=list)
    bridge_ports: list[BridgePort] = field(default_factory=list)
    addresses: list[IpAddress] = field(default_factory=list)
    discovery: Discovery = field(default_factory=Discovery)
    switch: SwitchChip = field(default_factory=SwitchChip)
    qos: Qos = field(default_factory=Qos)
    next_id: int = 1
    boot_time: float = 0.0
    #: The API server's training delay and line rate, recorded at its start so the SSH CLI
    #: process trains and shapes lanes alike.
    training_s: float = DEFAULT_TRAINING_S
    line_rate_mbit: int = 10000

    def new_id(self) -> str:
        """Fresh ``*N`` id (hex, like RouterOS)."""
        value = self.next_id
        self.next_id += 1
        return f"*{value:X}"

    def lane(self, name: str) -> Lane | None:
        return next((lane for lane in self.lanes if lane.name == name), None)

    def bridge(self, name: str) -> Bridge | None:
        return next((b for b in self.bridges if b.name == name), None)

    def ether(self, name: str) -> Ether | None:
        return next((e for e in self.ethers if e.name == name), None)

    def interface_names(self) -> list[str]:
        """Every name ``/interface`` knows: lanes, copper ports, bridges."""
        return ([lane.name for lane in self.lanes] + [e.name for e in self.ethers]
                + [b.name for b in self.bridges])


def network_of(address: str) -> str:
    """``198.18.3.10/24`` -> ``198.18.3.0`` (RouterOS's ``network`` default)."""
    return str(ipaddress.IPv4Interface(address).network.network_address)


def new_state(
    identity: str,
    lanes: dict[str, int],
    username: str,
    password: str,
    version: str = DEFAULT_VERSION,
    platform: Platform = CRS804,
    *,
    config: str = NO_DEFAULTS,
    mgmt_address: str | None = None,
    chip_family: str = DEFAULT_CHIP_FAMILY,
) -> State:
    """All 32 lanes (the cabled ones carrying their cable capability in Gbit/s) and ether1,
    configured as ``config`` says (see ``CONFIGS``); ``mgmt_address`` (``A.B.C.D/N``) becomes the
    one ``/ip/address`` item, on ``bridge`` (factory) or ``ether1``. ``chip_family`` is one of
    platforms.yaml's ``routeros_properties.families``."""
    unknown = sorted(set(lanes) - set(LANE_NAMES))
    if unknown:
        raise ValueError(f"not a CRS804 lane: {', '.join(unknown)}")
    if config not in CONFIGS:
        raise ValueError(f"config must be one of {', '.join(CONFIGS)}, got {config!r}")
    families = routeros_properties().families
    if chip_family not in families:
        raise ValueError(f"chip_family must be one of {', '.join(families)}, got {chip_family!r}")
    state = State(identity=identity, username=username, password=password, version=version,
                  chip_family=chip_family)
    for index, name in enumerate(LANE_NAMES, start=1):
        state.lanes.append(
            Lane(
                id=state.new_id(),
                name=name,
                default_name=name,
                cable_gbps=int(lanes.get(name, 0)),
                mac_address=platform.lane_mac(index),
            )
        )
    for name in platform.ether_ports:
        state.ethers.append(Ether(id=state.new_id(), name=name, default_name=name,
                                  mac_address=platform.lane_mac(0)))
    state.qos = default_qos([e.name for e in state.ethers] + [lane.name for lane in state.lanes])
    mgmt_if = platform.ether_ports[0]
    if config in (FACTORY, PREPARED):
        state.bridges.append(Bridge(id=state.new_id(), name=FACTORY_BRIDGE, comment=DEFCONF))
        ports = [e.name for e in state.ethers] + [lane.name for lane in state.lanes]
        for port in ports:
            if config == PREPARED and port == mgmt_if:
                continue  # the admin's first step: `/interface bridge port remove`
            state.bridge_ports.append(BridgePort(id=state.new_id(), bridge=FACTORY_BRIDGE,
                                                 interface=port, comment=DEFCONF))
    if mgmt_address is not None:
        interface = FACTORY_BRIDGE if config == FACTORY else mgmt_if
        ipaddress.IPv4Interface(mgmt_address)  # ValueError on nonsense
        state.addresses.append(IpAddress(
            id=state.new_id(), address=mgmt_address, network=network_of(mgmt_address),
            interface=interface, comment=DEFCONF if config != NO_DEFAULTS else ""))
    return state


def to_json(state: State) -> dict[str, Any]:
    return {"schema": SCHEMA, **asdict(state)}


def from_json(data: dict[str, Any]) -> State:
    if data.get("schema") != SCHEMA:
        raise ValueError(f"state file schema is {data.get('schema')!r}, expected {SCHEMA!r}")
    body = {k: v for k, v in data.items() if k != "schema"}
    body["lanes"] = [Lane(**x) for x in body.get("lanes", [])]
    body["ethers"] = [Ether(**x) for x in body.get("ethers", [])]
    body["bridges"] = [Bridge(**x) for x in body.get("bridges", [])]
    body["bridge_ports"] = [BridgePort(**x) for x in body.get("bridge_ports", [])]
    body["addresses"] = [IpAddress(**x) for x in body.get("addresses", [])]
    body["discovery"] = Discovery(**body.get("discovery", {}))
    body["switch"] = SwitchChip(**body.get("switch", {}))
    if "qos" in body:
        q = dict(body["qos"])
        body["qos"] = Qos(
            profiles=[QosProfile(**x) for x in q.get("profiles", [])],
            maps_ip=[QosMapIp(**x) for x in q.get("maps_ip", [])],
            tx_queues=[TxQueue(**x) for x in q.get("tx_queues", [])],
            pfc=[PfcProfile(**x) for x in q.get("pfc", [])],
            ports=[QosPort(**x) for x in q.get("ports", [])],
            settings=QosSettings(**q.get("settings", {})), next_id=q.get("next_id", 1))
    else:  # a state written before QoS was emulated
        body["qos"] = default_qos([e.name for e in body["ethers"]]
                                  + [lane.name for lane in body["lanes"]])
    return State(**body)


class StateFile:
    """Load / atomically save the state; ``edit()`` is a locked read-modify-write."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self._lock_path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def load(self) -> State:
        return from_json(json.loads(self.path.read_text()))

    def signature(self) -> tuple[int, int, int]:
        """Changes whenever the file is replaced (every save makes a new inode)."""
        st = os.stat(self.path)
        return st.st_ino, st.st_mtime_ns, st.st_size

    def save(self, state: State) -> None:
        with self._locked():
            self._write(state)

    def _write(self, state: State) -> None:
        write_json_atomically(self.path, to_json(state), fsync=True)

    @contextlib.contextmanager
    def edit(self) -> Iterator[State]:
        """Yield the current state; it is written back if the block finishes without error."""
        with self._locked():
            state = self.load()
            yield state
            self._write(state)


def write_initial_state(
    path: str | os.PathLike[str],
    identity: str,
    lanes: dict[str, int],
    username: str,
    password: str,
    version: str = DEFAULT_VERSION,
    *,
    config: str = NO_DEFAULTS,
    mgmt_address: str | None = None,
    chip_family: str = DEFAULT_CHIP_FAMILY,
) -> None:
    """Create the emulator's state file: ``lanes`` maps cabled lane name -> cable Gbit/s.

    Example: ``{"qsfp56-dd-1-1": 200, "qsfp56-dd-1-5": 200}`` for a 2x200G breakout on port 1.
    Lanes not named are uncabled. Each cabled lane must exist as a netdev of the same name in
    the switch namespace before the server starts. ``config`` and ``mgmt_address``: see
    ``new_state`` (the default is a switch reset with no defaults: no bridge, no address).
    ``chip_family``: which properties the QoS menus have (``prestera-dx``, the default, or
    ``prestera-cpss``: no ``use-shared-buffers`` / ``queue-buffers`` on the tx-manager queues).
    """
    StateFile(path).save(new_state(identity, lanes, username, password, version,
                                   config=config, mgmt_address=mgmt_address,
                                   chip_family=chip_family))


def write_json_atomically(path: Path, data: Any, fsync: bool = False) -> None:
    """`data` as JSON in `path`, replaced at once (a reader sees the old file or the new)."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
