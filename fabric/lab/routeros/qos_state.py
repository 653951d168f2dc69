"""The emulated QoS state of the switch chip (``/interface/ethernet/switch`` and its ``qos``
menus): kept in the state file, never in the kernel (the lab's kernel has no QoS)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: The built-in Tx queue setup of the default tx-manager (MikroTik manual, "Quality of
#: Service", Traffic Prioritization): traffic class -> (schedule, weight, use-shared-buffers).
DEFAULT_TX_QUEUES: dict[int, tuple[str, int, bool]] = {
    0: ("low-priority-group", 1, False), 1: ("low-priority-group", 2, True),
    2: ("low-priority-group", 3, True), 3: ("high-priority-group", 3, True),
    4: ("high-priority-group", 4, True), 5: ("high-priority-group", 5, True),
    6: ("strict-priority", 0, True), 7: ("strict-priority", 0, True),
}  # fmt: skip
SWITCH_CPU = "switch1-cpu"


@dataclass
class SwitchChip:
    """The one switch chip row of ``/interface/ethernet/switch``."""

    id: str = "*1"
    name: str = "switch1"
    type: str = "Marvell-98DX7335"
    l3_hw_offloading: bool = False
    qos_hw_offloading: bool = False


@dataclass
class QosProfile:
    id: str
    name: str
    traffic_class: int = 0
    dscp: int | None = None
    pcp: int | None = None
    automap: bool = True  # 7.23+: map trusted packets with this DSCP/PCP to the profile
    builtin: bool = False
    comment: str = ""


@dataclass
class QosMapIp:
    """One ``/interface/ethernet/switch/qos/map/ip`` item: DSCP values -> a profile."""

    id: str
    dscp: str  # "26", "1,3-4"
    profile: str
    map: str = ""  # "": the built-in default map
    disabled: bool = False


@dataclass
class TxQueue:
    id: str
    tx_manager: str
    traffic_class: int
    schedule: str
    weight: int
    use_shared_buffers: bool = True
    wred: bool = False
    ecn: bool = False
    queue_buffers: str = "auto"


@dataclass
class PfcProfile:
    id: str
    name: str
    traffic_class: str = ""  # "3", "3,4"
    rx: bool = True
    tx: bool = True
    pause_threshold: str = "auto"
    resume_threshold: str = "auto"
    builtin: bool = False  # the built-in "disabled" profile cannot be changed


@dataclass
class QosPort:
    """One switch port's ``/interface/ethernet/switch/qos/port`` settings."""

    id: str
    name: str
    profile: str = "default"
    map: str = "default"
    trust_l2: str = "ignore"
    trust_l3: str = "ignore"
    tx_manager: str = "default"
    pfc: str = "disabled"
    #: queue number ("0".."7") -> egress rate in bit/s; absent: not set
    egress_rate: dict[str, int] = field(default_factory=dict)


@dataclass
class QosSettings:
    multicast_buffers: str = "auto"
    shared_buffers: str = "auto"
    wred_threshold: str = "medium"
    lossless_buffers: str = "auto"  # 7.23+
    lossless_traffic_class: str = "auto"  # 7.23+: "auto" or "3", "3,4"


@dataclass
class Qos:
    profiles: list[QosProfile] = field(default_factory=list)
    maps_ip: list[QosMapIp] = field(default_factory=list)
    tx_queues: list[TxQueue] = field(default_factory=list)
    pfc: list[PfcProfile] = field(default_factory=list)
    ports: list[QosPort] = field(default_factory=list)
    settings: QosSettings = field(default_factory=QosSettings)
    next_id: int = 1

    def new_id(self) -> str:
        """Fresh ``*N`` id of a QoS item (their own numbering: a new menu in RouterOS)."""
        value = self.next_id
        self.next_id += 1
        return f"*{value:X}"

    def profile(self, name: str) -> QosProfile | None:
        return next((p for p in self.profiles if p.name == name), None)

    def pfc_profile(self, name: str) -> PfcProfile | None:
        return next((p for p in self.pfc if p.name == name), None)


def default_qos(ports: list[str]) -> Qos:
    """QoS as a switch starts: every port untrusted with the default profile, the default
    tx-manager's queues, the built-in ``default`` profile (traffic class 1: best effort) and
    the built-in ``disabled`` PFC profile."""
    qos = Qos()
    qos.profiles.append(QosProfile(qos.new_id(), "default", traffic_class=1, dscp=0, pcp=0,
                                   automap=False, builtin=True))
    for tc, (schedule, weight, shared) in DEFAULT_TX_QUEUES.items():
        qos.tx_queues.append(TxQueue(qos.new_id(), "default", tc, schedule, weight, shared))
    qos.pfc.append(PfcProfile(qos.new_id(), "disabled", "", False, False, builtin=True))
    qos.ports += [QosPort(qos.new_id(), name) for name in [*ports, SWITCH_CPU]]
    return qos
