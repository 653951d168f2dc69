"""Switch models and their port modes, as data (platforms.yaml)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from fabric.intent.yamlsource import load_text


def version_tuple(version: str) -> tuple[int, ...]:
    """'7.19.4 (stable)' -> (7, 19, 4); unreadable parts are 0. The one version parser: push,
    the devices and the lab's emulator all compare RouterOS versions with it."""
    head = version.split()[0] if version.split() else "0"
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in head.split("."))


def at_least(version: str, minimum: str) -> bool:
    """Whether RouterOS `version` is `minimum` or newer."""
    return version_tuple(version) >= version_tuple(minimum)


@dataclass(frozen=True)
class PortMode:
    """How a port is split: the first lane of each group, its forced speed and rate."""

    name: str
    first_lanes: tuple[int, ...]
    speed: str
    gbps: int
    auto_negotiation: bool

    def group_of(self, lane: int, lanes_per_port: int) -> int:
        """The first lane of the group `lane` belongs to."""
        size = lanes_per_port // len(self.first_lanes)
        return ((lane - 1) // size) * size + 1


@dataclass(frozen=True)
class SwitchModel:
    name: str
    description: str
    port_name: str
    lane_name: str
    ports: int
    lanes_per_port: int
    max_l2mtu: int
    default_l2mtu: int
    modes: dict[str, PortMode]
    fec_mode: str
    #: RouterOS version gates of the switch chip's QoS menus (platforms.yaml; the lab's
    #: emulator opens its menus by the same data): marking (profiles, maps, port trust),
    #: enforcement (PFC, ECN, queues, `qos-hw-offloading`: what lossless needs), lossless
    #: traffic classes and profile `automap`
    qos_min_version: str
    qos_marking_version: str = "7.10"
    qos_lossless_tc_version: str = "7.23"
    qos_switch: str = "switch1"
    #: (RouterOS version from which it holds, the most egress-rate-queueN takes in Gb/s, the
    #: evidence), oldest first
    qos_egress_caps: tuple[tuple[str, int, str], ...] = (("7.15", 100, ""),)

    def qos_max_egress_gbps(self, version: str) -> int:
        """The most a lane's queue shaper takes on RouterOS `version` (the newest cap whose
        `since` is not above it; the oldest where the version is older or unreadable)."""
        fitting = [cap for since, cap, _ in self.qos_egress_caps
                   if version_tuple(since) <= version_tuple(version)]
        return fitting[-1] if fitting else self.qos_egress_caps[0][1]

    def port_names(self) -> list[str]:
        return [self.port_name.format(port=p) for p in range(1, self.ports + 1)]

    def lane(self, port: int, lane: int) -> str:
        return self.lane_name.format(port=port, lane=lane)

    def all_lanes(self) -> list[str]:
        return [self.lane(p, n) for p in range(1, self.ports + 1)
                for n in range(1, self.lanes_per_port + 1)]

    def split_lane(self, name: str) -> tuple[int, int] | None:
        """'qsfp56-dd-3-5' -> (3, 5); None if it is not a lane of this model."""
        for p in range(1, self.ports + 1):
            for n in range(1, self.lanes_per_port + 1):
                if self.lane(p, n) == name:
                    return p, n
        return None

    def capacity(self, gbps: int) -> int:
        """How many links of `gbps` the switch can take at most."""
        best = [len(m.first_lanes) for m in self.modes.values() if m.gbps >= gbps]
        return self.ports * max(best, default=0)


@cache
def _raw() -> dict[str, Any]:
    data: dict[str, Any] = load_text(
        resources.files("fabric.intent").joinpath("platforms.yaml").read_text())
    return data


def spark_port_gbps() -> int:
    return int(_raw()["spark"]["port_gbps"])


def switch_model(name: str) -> SwitchModel:
    """The named switch model; KeyError if unknown."""
    raw = dict(_raw()[name])
    modes = {k: PortMode(name=k, first_lanes=tuple(v["first_lanes"]), speed=v["speed"],
                         gbps=v["gbps"], auto_negotiation=v["auto_negotiation"])
             for k, v in raw.pop("modes").items()}
    caps = tuple((str(c["since"]), int(c["max_gbps"]), " ".join(str(c.get("evidence", "")).split()))
                 for c in raw.pop("qos_egress_caps", []))
    model = SwitchModel(name=name, modes=modes, **raw)
    return dataclasses.replace(model, qos_egress_caps=caps) if caps else model


@dataclass(frozen=True)
class RoceQos:
    """The lossless RoCE recipe both ends share (platforms.yaml `roce_qos`)."""

    dscp: int
    priority: int
    cnp_dscp: int
    cnp_traffic_class: int
    profile: str
    cnp_profile: str
    pfc_profile: str
    trust_l3: str
    queues: dict[int, dict[str, str]]
    #: what a missing queue property costs, by property (said in the plan when not sent)
    absent_costs: dict[str, str] = field(default_factory=dict)

    @property
    def pfc_bits(self) -> str:
        """`mlnx_qos --pfc` for PFC on `priority` alone: 0,0,0,1,0,0,0,0."""
        return ",".join("1" if p == self.priority else "0" for p in range(8))

    @property
    def traffic_class_byte(self) -> int:
        """The IP ToS byte of RoCE data: DSCP in the upper six bits, ECT(0) below (106)."""
        return self.dscp << 2 | 2


@cache
def roce_qos() -> RoceQos:
    raw = dict(_raw()["roce_qos"])
    queues = {int(tc): {str(k): str(v) for k, v in q.items()}
              for tc, q in raw.pop("queues").items()}
    costs = {str(k): " ".join(str(v).split()) for k, v in raw.pop("absent_costs", {}).items()}
    return RoceQos(queues=queues, absent_costs=costs, **raw)


#: What a settable property's value is (platforms.yaml `routeros_properties` says each).
PROPERTY_TYPES = ("bool", "int", "choice", "text", "classes", "dscp-list", "rate", "ref", "name")


@dataclass(frozen=True)
class MenuProperty:
    """One property of a RouterOS menu's rows (platforms.yaml `routeros_properties`)."""

    name: str
    #: the first RouterOS major.minor that has it ("": every version)
    since: str = ""
    #: the switch-chip families without it (MikroTik CLI reference syscap `!family`)
    not_on: tuple[str, ...] = ()
    #: printed only on the rows where it has a value
    optional: bool = False
    #: what set/add take (PROPERTY_TYPES); "": read-only
    type: str = ""
    #: an `int`'s least and most
    range: tuple[int, int] | None = None
    #: a `choice`'s values
    choices: tuple[str, ...] = ()
    #: values taken as they are besides the type's own ("auto")
    words: tuple[str, ...] = ()
    #: a `ref`'s menu: the value names one of its items
    ref: str = ""
    #: what an item has until set, as printed (None: items start differently)
    default: str | None = None

    @property
    def read_only(self) -> bool:
        return not self.type

    def refuses(self, value: str) -> str | None:
        """Why this property would not take `value` (RouterOS's own checks of a bool, int or
        choice, as the table says them), or None. Other types are taken as they are."""
        if self.read_only:
            return "read-only"
        if value in self.words:
            return None
        if self.type == "bool" and value not in ("yes", "no", "true", "false"):
            return "yes or no"
        if self.type == "int":
            low, high = self.range or (None, None)
            if not value.lstrip("-").isdigit():
                return "an integer"
            if low is not None and high is not None and not low <= int(value) <= high:
                return f"an integer {low}..{high}"
        if self.type == "choice" and self.choices and value not in self.choices:
            return f"one of {', '.join(self.choices)}"
        return None

    def present(self, family: str, version: str) -> bool:
        """Whether a chip of `family` on RouterOS `version` has this property."""
        if family in self.not_on:
            return False
        return not self.since or version_tuple(version)[:2] >= version_tuple(self.since)[:2]


@dataclass(frozen=True)
class RouterOsProperties:
    """Which properties each menu's rows have, by chip family and RouterOS version, and what
    each one takes."""

    #: family -> what it is
    families: dict[str, str]
    #: menu path -> its properties, in print order
    menus: dict[str, tuple[MenuProperty, ...]]

    def shown(self, menu: str, family: str, version: str) -> tuple[str, ...]:
        """The properties `menu` has on a chip of `family` running `version`; KeyError for an
        unknown family or a menu the table does not hold."""
        if family not in self.families:
            raise KeyError(family)
        return tuple(p.name for p in self.menus[menu] if p.present(family, version))

    def absent(self, menu: str, family: str, version: str) -> tuple[str, ...]:
        """The properties of `menu` that this chip and version lack."""
        shown = set(self.shown(menu, family, version))
        return tuple(p.name for p in self.menus[menu] if p.name not in shown)

    def settable(self, menu: str, family: str, version: str) -> tuple[str, ...]:
        """The properties set/add of `menu` take on this chip and version."""
        shown = set(self.shown(menu, family, version))
        return tuple(p.name for p in self.menus[menu] if not p.read_only and p.name in shown)

    def prop(self, menu: str, name: str) -> MenuProperty:
        """`menu`'s property `name`; KeyError if the table does not hold it."""
        found = next((p for p in self.menus[menu] if p.name == name), None)
        if found is None:
            raise KeyError(f"{menu} {name}")
        return found


def _menu_property(name: str, spec: dict[str, Any]) -> MenuProperty:
    kind = str(spec.get("type", ""))
    if kind and kind not in PROPERTY_TYPES:
        raise ValueError(f"routeros_properties: {name}: unknown type {kind!r}")
    low_high = spec.get("range")
    default = spec.get("default")
    return MenuProperty(
        name=name, since=str(spec.get("since", "")),
        not_on=tuple(str(f) for f in spec.get("not_on", ())),
        optional=bool(spec.get("optional", False)), type=kind,
        range=(int(low_high[0]), int(low_high[1])) if low_high else None,
        choices=tuple(str(c) for c in spec.get("choices", ())),
        words=tuple(str(w) for w in spec.get("words", ())), ref=str(spec.get("ref", "")),
        default=None if default is None else str(default))


@cache
def routeros_properties() -> RouterOsProperties:
    raw = _raw()["routeros_properties"]
    families = {str(k): " ".join(str(v).split()) for k, v in raw["families"].items()}
    menus: dict[str, tuple[MenuProperty, ...]] = {}
    for path, props in raw["menus"].items():
        menus[str(path)] = tuple(_menu_property(str(name), dict(spec or {}))
                                 for name, spec in props.items())
    unknown = {f for ps in menus.values() for p in ps for f in p.not_on} - set(families)
    if unknown:
        raise ValueError(f"routeros_properties: unknown chip families {sorted(unknown)}")
    refs = {p.ref for ps in menus.values() for p in ps if p.ref} - set(menus)
    if refs:
        raise ValueError(f"routeros_properties: ref to menus it lacks {sorted(refs)}")
    return RouterOsProperties(families=families, menus=menus)


#: Top-level keys of platforms.yaml that are not switch models.
_NOT_MODELS = ("spark", "roce_qos", "routeros_properties")


def switch_models() -> list[str]:
    return sorted(k for k in _raw() if k not in _NOT_MODELS)
