"""Build `SparkFacts` from the sections of one Spark's facts batch: plain records (name,
exit status, output), read by rules (`SectionRule`: which parser, which tool, which exit codes
still count) that the collector's command table provides.

Decisions (what a section that cannot be used becomes):

- exit 127 (not installed): the command's tool goes to `SparkFacts.missing`;
- no RDMA device from either ibdev2netdev or `rdma link`: "rdma: no RDMA devices" in `missing`;
- a netdev the intent names but the host lacks: one note, its ethtool/QoS facts left out;
- another non-zero exit, an empty output where one is required, or output the parser rejects
  (`ParseError`): a note naming the section and why; the fact stays empty or None. A garbled
  section never stops the rest of the host's facts from being built;
- a command that was not in the batch at all (the narrow batch of `fabric gate`, or a
  validation narrowed to some families): no fact, no note; "no RDMA devices" is only
  concluded when the RDMA map was read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from fabric.facts import (
    EthtoolFact,
    GidFact,
    NeighborFact,
    NetdevFact,
    QosFact,
    RouteFact,
    SparkFacts,
    TimeFact,
    VersionFacts,
)
from fabric.facts_builder.host import build_host_state
from fabric.facts_builder.sections import ABSENT_RC as ABSENT_RC  # devices.spark.commands
from fabric.facts_builder.sections import Section as Section  # devices.spark.facts, tests
from fabric.facts_builder.sections import SectionReader, SectionRule
from fabric.neighbors import BEACON_OUI, BEACON_SUBTYPE, age_seconds
from fabric.parsers.records import (
    ChronyTracking,
    EthtoolDriver,
    EthtoolSettings,
    GidEntry,
    IpLink,
    IpRoute,
    IptablesChain,
    LldpNeighbor,
    MlnxQos,
    RdmaLink,
    RdmaNetdev,
)

NO_RDMA = "rdma: no RDMA devices"


def build_spark_facts(host: str, twins: Sequence[str], sections: dict[str, Section],
                      commands: Sequence[SectionRule],
                      used: Sequence[str] | None = None) -> SparkFacts:
    """SparkFacts for `host` from its batch's sections, read by the rules `commands`.

    `twins` are its fabric netdevs (the port map); `used` those the intent cables (default:
    all). A used twin that is absent gets a note; an absent spare twin is skipped quietly.
    """
    spare = frozenset(twins) - frozenset(twins if used is None else used)
    rd = SectionReader(sections, {c.name: c for c in commands}, spare=spare)
    hostname = rd.text("hostname") or ""
    netdevs = _netdevs(rd)
    ethtool = {n: f for n in twins if (f := _ethtool(rd, n)) is not None}
    qos = {n: q for n in twins if (q := _qos(rd, n)) is not None}
    rdma = _rdma(rd)
    gids = _gids(rd)
    if not rdma and not gids and rd.asked("ibdev2netdev", "rdma_link"):
        rd.missing[NO_RDMA] = None
    neighbors = _neighbors(rd)
    beacon = _lldp_beacon(rd)
    host_state = build_host_state(rd, twins)
    return SparkFacts(
        host=host,
        hostname=hostname,
        netdevs=netdevs,
        routes=_routes(rd),
        ethtool=ethtool,
        rdma=rdma,
        gids=gids,
        neighbors=neighbors,
        versions=_versions(rd, ethtool, twins, host_state.bios_version, host_state.bios_date),
        time=_time(rd),
        forward_policy=_forward_policy(rd),
        qos=qos,
        missing=tuple(rd.missing),
        notes=tuple(rd.notes),
        lldp_beacon=beacon,
        host_state=host_state,
    )


def _netdevs(rd: SectionReader) -> dict[str, NetdevFact]:
    links = rd.records("ip_link", IpLink)
    addrs = rd.records("ip_addr", IpLink)
    by_name = {a.ifname: a for a in addrs or []}
    out: dict[str, NetdevFact] = {}
    for link in links if links is not None else addrs or []:
        flags = set(link.flags)
        with_addr = by_name.get(link.ifname, link)
        out[link.ifname] = NetdevFact(
            name=link.ifname,
            mtu=link.mtu or 0,
            admin_up="UP" in flags,
            carrier="LOWER_UP" in flags and "NO-CARRIER" not in flags,
            mac=link.address,
            kind=link.kind,
            addresses=tuple(f"{a.address}/{a.prefixlen}" for a in with_addr.addresses
                            if a.family == "inet"),
        )
    return out


def _routes(rd: SectionReader) -> tuple[RouteFact, ...]:
    return tuple(RouteFact(dst=r.dst, dev=r.dev or "", gateway=r.gateway)
                 for r in rd.records("ip_route", IpRoute) or [])


def _ethtool(rd: SectionReader, netdev: str) -> EthtoolFact | None:
    settings = rd.records(f"ethtool:{netdev}", EthtoolSettings)
    driver = rd.records(f"ethtool_i:{netdev}", EthtoolDriver)
    if not settings and not driver:
        return None
    s = settings[0] if settings else None
    d = driver[0] if driver else None
    return EthtoolFact(
        netdev=netdev,
        speed_mbps=s.speed_mbps if s else None,
        link_detected=s.link_detected if s else None,
        driver=d.driver if d else None,
        driver_version=d.version if d else None,
        firmware=d.firmware_version if d else None,
    )


def _qos(rd: SectionReader, netdev: str) -> QosFact | None:
    found = rd.records(f"mlnx_qos:{netdev}", MlnxQos)
    if not found:
        return None
    return QosFact(netdev=netdev, trust=found[0].trust, pfc_enabled=found[0].pfc_enabled)


def _rdma(rd: SectionReader) -> dict[str, str]:
    mapping = rd.records("ibdev2netdev", RdmaNetdev)
    links = rd.records("rdma_link", RdmaLink)
    if mapping:
        return {m.rdma_device: m.netdev for m in mapping}
    return {lk.rdma_device: lk.netdev for lk in links or [] if lk.netdev}


def _gids(rd: SectionReader) -> tuple[GidFact, ...]:
    entries = rd.records("show_gids", GidEntry)
    fallback = rd.records("sysfs_gids", GidEntry)
    chosen = entries if entries else fallback or []
    return tuple(
        GidFact(rdma=g.device, port=g.port, index=g.index, gid=g.gid,
                gid_type="RoCE v2" if g.roce_version == "v2" else "RoCE v1",
                ipv4=g.ipv4, netdev=g.netdev)
        for g in chosen
    )


def _neighbors(rd: SectionReader) -> tuple[NeighborFact, ...]:
    found = rd.records("lldpcli", LldpNeighbor) or []
    extras = _lldp_extras(rd.sections["lldpcli"].output) if found else []
    if len(extras) != len(found):
        extras = [(None, None)] * len(found)
    return tuple(
        NeighborFact(local_port=n.local_interface,
                     system_name=n.chassis_name or n.chassis_id or "",
                     port_id=n.port_id or "", port_descr=n.port_descr, age_s=age,
                     beacon=beacon)
        for n, (age, beacon) in zip(found, extras, strict=True)
    )


def _as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def _beacon(neighbor: dict[str, Any]) -> str | None:
    """The value of the fabric beacon TLV among a neighbour's `unknown-tlvs`, if any."""
    tlvs = neighbor.get("unknown-tlvs")
    found = tlvs.get("unknown-tlv") if isinstance(tlvs, dict) else None
    for tlv in _as_list(found) if found is not None else []:
        if (isinstance(tlv, dict) and str(tlv.get("oui", "")).upper() == BEACON_OUI
                and str(tlv.get("subtype")) == str(BEACON_SUBTYPE)):
            value = tlv.get("value")
            return str(value).upper() if value is not None else None
    return None


def _lldp_extras(raw: str) -> list[tuple[float | None, str | None]]:
    """Each neighbour's `age` (seconds since lldpd learned it or saw it change) and fabric
    beacon, in the order the lldpcli reader lists the neighbours (interface entries, then
    neighbours per interface)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    lldp = data.get("lldp") if isinstance(data, dict) else None
    entries = lldp.get("interface") if isinstance(lldp, dict) else None
    out: list[tuple[float | None, str | None]] = []
    for entry in _as_list(entries) if entries is not None else []:
        for body in (entry.values() if isinstance(entry, dict) else []):
            for neighbor in _as_list(body):
                if not isinstance(neighbor, dict):
                    out.append((None, None))
                    continue
                age = neighbor.get("age")
                out.append((age_seconds(age) if isinstance(age, str) else None,
                            _beacon(neighbor)))
    return out


def _lldp_beacon(rd: SectionReader) -> str | None:
    """The beacon value the host announced (the `lldp_beacon` row echoes it on success)."""
    text = rd.text("lldp_beacon")
    return text.upper() if text and _BEACON_VALUE.match(text) else None


_BEACON_VALUE = re.compile(r"^[0-9A-Fa-f]{2}(,[0-9A-Fa-f]{2})*$")


_NCCL_LIB = re.compile(r"libnccl\.so\.(\d+(?:\.\d+)+)")
_NCCL_PKG = re.compile(r"^\d+\.\d+\.\d+\S*$")
_DRIVER = re.compile(r"^\d+(?:\.\d+)+$")
_PROC_DRIVER = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)*)")


def _versions(rd: SectionReader, ethtool: dict[str, EthtoolFact], twins: Sequence[str],
              bios: str | None = None, bios_date: str | None = None) -> VersionFacts:
    nic = next((ethtool[t] for t in twins if t in ethtool and ethtool[t].driver), None)
    return VersionFacts(
        kernel=rd.text("uname_r") or None,
        nic_driver=nic.driver if nic else None,
        nic_firmware=nic.firmware if nic else None,
        nccl=_nccl(rd),
        cuda_driver=_cuda(rd),
        cuda=_cuda_toolkit(rd),
        bios=f"{bios} ({bios_date})" if bios and bios_date else bios,
    )


def _nccl(rd: SectionReader) -> str | None:
    out = rd.text("nccl")
    if not out:
        return None
    first = out.splitlines()[0].strip()
    if m := _NCCL_LIB.search(first):
        return m.group(1)
    if _NCCL_PKG.match(first):
        return first
    rd.notes[f"nccl: unrecognised version text: {first[:80]}"] = None
    return None


def _cuda(rd: SectionReader) -> str | None:
    out = rd.text("cuda_driver")
    if not out:
        return None
    first = out.splitlines()[0].strip()
    if _DRIVER.match(first):
        return first
    if m := _PROC_DRIVER.search(out):
        return m.group(1)
    rd.notes[f"cuda_driver: unrecognised version text: {first[:80]}"] = None
    return None


_NVCC = re.compile(r"release\s+\d+\.\d+,\s+V(\d+(?:\.\d+)+)")


def _cuda_toolkit(rd: SectionReader) -> str | None:
    """CUDA toolkit version from /usr/local/cuda/version.json, or `nvcc --version`."""
    out = rd.text("cuda_toolkit")
    if not out:
        return None
    try:
        version = json.loads(out)["cuda"]["version"]
        if isinstance(version, str) and version:
            return version
    except (ValueError, KeyError, TypeError):
        pass
    if m := _NVCC.search(out):
        return m.group(1)
    rd.notes[f"cuda_toolkit: unrecognised version text: {out.splitlines()[0][:80]}"] = None
    return None


def _time(rd: SectionReader) -> TimeFact | None:
    tracking = rd.records("chronyc_tracking", ChronyTracking)
    show = rd.text("timedatectl")
    if tracking:
        t = tracking[0]
        return TimeFact(source="chrony", synced=t.leap_status.lower() == "normal",
                        offset_s=t.system_time_offset_s, stratum=t.stratum)
    if show:
        props = dict(ln.split("=", 1) for ln in show.splitlines() if "=" in ln)
        synced = props.get("NTPSynchronized")
        return TimeFact(source="timedatectl",
                        synced=None if synced is None else synced == "yes", offset_s=None)
    return None


def _forward_policy(rd: SectionReader) -> str | None:
    chains = rd.records("iptables_forward", IptablesChain)
    return next((c.policy for c in chains or [] if c.chain == "FORWARD"), None)
