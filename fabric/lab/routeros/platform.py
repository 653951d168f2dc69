"""What the emulated CRS804-4DDQ-hRM is: lane names, link modes, limits and defaults (data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric.devices.crs804.platform import MODEL
from fabric.intent.platforms import switch_model, version_tuple

PORTS = 4
LANES_PER_PORT = 8
LANE_NAMES: tuple[str, ...] = tuple(
    f"qsfp56-dd-{p}-{lane}" for p in range(1, PORTS + 1) for lane in range(1, LANES_PER_PORT + 1)
)

# speed link-mode names (RouterOS 7.12+) -> Gbit/s; the CRS804 lanes take these.
LINK_MODES: dict[str, int] = {
    "10G-baseCR": 10,
    "10G-baseSR-LR": 10,
    "25G-baseCR": 25,
    "25G-baseSR": 25,
    "40G-baseCR4": 40,
    "40G-baseSR4": 40,
    "50G-baseCR": 50,
    "50G-baseCR2": 50,
    "100G-baseCR": 100,
    "100G-baseCR2": 100,
    "100G-baseCR4": 100,
    "100G-baseSR4": 100,
    "200G-baseCR2": 200,
    "200G-baseCR4": 200,
    "200G-baseSR4": 200,
    "400G-baseCR4": 400,
    "400G-baseCR8": 400,
    "400G-baseSR8": 400,
}
#: The copper management port's link modes (RouterOS names).
ETHER_LINK_MODES: tuple[str, ...] = (
    "10M-baseT-half",
    "10M-baseT-full",
    "100M-baseT-half",
    "100M-baseT-full",
    "1G-baseT-half",
    "1G-baseT-full",
)
FEC_MODES: tuple[str, ...] = ("auto", "fec74", "fec91", "off")
DISCOVERY_PROTOCOLS: tuple[str, ...] = ("cdp", "lldp", "mndp")
# Speeds at or above this need RS-FEC (fec91); only 400G may auto-negotiate on this chip.
FEC91_MIN_GBPS = 200
AUTONEG_OK_GBPS = 400
MOD_MAC_PREFIX = "48:A9:8A"


@dataclass(frozen=True)
class Platform:
    """Board facts and limits; every number here is data a lab may override."""

    board_name: str = "CRS804-4DDQ"
    model: str = "CRS804-4DDQ-hRM"
    architecture_name: str = "arm64"
    cpu: str = "ARM64"
    cpu_count: int = 4
    cpu_frequency: int = 1600
    total_memory: int = 2 * 1024**3
    free_memory: int = 1_700_000_000
    total_hdd_space: int = 128 * 1024**2
    free_hdd_space: int = 90 * 1024**2
    default_mtu: int = 1500
    default_l2mtu: int = 1584
    max_l2mtu: int = 9570
    min_mtu: int = 64
    default_speed: str = "400G-baseCR8"
    default_advertise: tuple[str, ...] = field(
        default=("100G-baseCR2", "100G-baseCR4", "200G-baseCR4", "400G-baseCR8")
    )
    #: The RJ45 management port(s); the lab's switch namespace has a netdev of this name.
    ether_ports: tuple[str, ...] = ("ether1",)
    ether_l2mtu: int = 1592
    ether_speed: str = "1G-baseT-full"
    ether_advertise: tuple[str, ...] = field(default=ETHER_LINK_MODES)
    #: /interface/ethernet/switch `type` of the switch chip
    switch_type: str = "Marvell-98DX7335"
    #: the most a QoS queue shaper (egress-rate-queueN) takes on this chip (field report)
    max_egress_rate_bps: int = 100 * 10**9
    #: ``/system/health`` rows (name, value, type) as RouterOS 7 prints them: the names of
    #: MikroTik's switches and routers with two hot-swap PSUs and a fan tray (CRS3xx/CRS5xx
    #: field outputs: cpu/switch temperature, fan-state, fanN-speed, psuN-state; the
    #: CCR1072's manual example: board-temperature1, psuN-voltage). The CRS804's own list is
    #: not verified on hardware; the values are a plausible idle switch.
    health: tuple[tuple[str, str, str], ...] = field(default=(
        ("cpu-temperature", "47", "C"),
        ("switch-temperature", "58", "C"),
        ("board-temperature1", "39", "C"),
        ("fan-state", "ok", ""),
        ("fan1-speed", "7320", "RPM"),
        ("fan2-speed", "7275", "RPM"),
        ("fan3-speed", "7350", "RPM"),
        ("fan4-speed", "7290", "RPM"),
        ("psu1-state", "ok", ""),
        ("psu2-state", "ok", ""),
        ("psu1-voltage", "12.1", "V"),
        ("psu2-voltage", "12.1", "V"),
    ))
    #: ``/system/package``: (name, size in bytes); the switch chip needs ``switch-marvell``.
    #: Sizes are plausible arm64 packages, not measured.
    packages: tuple[tuple[str, int], ...] = field(default=(
        ("routeros", 13_172_736), ("switch-marvell", 5_967_872)))
    #: The firmware's build time (``/system/resource`` and every package).
    build_time: str = "2025-07-24 10:02:08"

    def lane_mac(self, index: int) -> str:
        return f"{MOD_MAC_PREFIX}:{0x10:02X}:{index // 256:02X}:{index % 256:02X}"


CRS804 = Platform()

# RouterOS versions that brought the QoS menus of Marvell Prestera switch chips (MikroTik
# manual "Quality of Service"): QoS marking (profiles, maps, port trust) in 7.10; enforcement,
# PFC, ECN, WRED, shaping, QoS settings and `qos-hw-offloading` on every capable chip in 7.15;
# lossless traffic classes (`lossless-traffic-class`, `lossless-buffers`) and profile
# `automap` in 7.23. The gates are the model's platforms.yaml data, the ones push plans by.
_MODEL = switch_model(MODEL)
QOS_MARKING_SINCE = version_tuple(_MODEL.qos_marking_version)[:2]
QOS_SINCE = version_tuple(_MODEL.qos_min_version)[:2]
QOS_LOSSLESS_SINCE = version_tuple(_MODEL.qos_lossless_tc_version)[:2]
DEFAULT_VERSION = "7.19.4 (stable)"
#: The switch chip's family in MikroTik's CLI reference (platforms.yaml
#: `routeros_properties.families`). Which one the CRS804 is, is not settled: the default is the
#: family that has every queue property (use-shared-buffers, queue-buffers), today's rows.
DEFAULT_CHIP_FAMILY = "prestera-dx"

