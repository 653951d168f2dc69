"""Typed records that ``fabric.parsers.parse`` returns. All are frozen dataclasses,
one module per record family; import them from here.

Units are in the field name (``_gbps`` = 10^9 bit/s, ``_GBps`` = 10^9 byte/s, ``_us``, ``_ms``).
A field is None when the tool did not print it; it is never guessed.
"""

from __future__ import annotations

from fabric.parsers.records.base import Record
from fabric.parsers.records.host import (
    BiosInfo,
    ConfSetting,
    ContainerImage,
    MemInfo,
    NmConnection,
    PcieLink,
)
from fabric.parsers.records.link import (
    EthtoolCounter,
    EthtoolDriver,
    EthtoolFec,
    EthtoolPause,
    EthtoolSettings,
    IpAddress,
    IpBrief,
    IpLink,
    IpLinkStats,
    IpRoute,
    RdmaHwCounter,
)
from fabric.parsers.records.rdma import (
    GidEntry,
    IbPortAttrs,
    IbvGid,
    IbvPort,
    PerftestBandwidth,
    PerftestError,
    PerftestHeader,
    PerftestLatency,
    RdmaLink,
    RdmaNetdev,
)
from fabric.parsers.records.services import (
    ChronyTracking,
    IptablesChain,
    KernelEvent,
    LldpNeighbor,
    MlnxQos,
    QosTrafficClass,
    RouterosCommand,
)
from fabric.parsers.records.traffic import (
    Iperf3Result,
    NcclNetDevice,
    NcclNetSelection,
    NcclTestRow,
    NcclTestSummary,
    NcclWarning,
    PingResult,
)

__all__ = [
    "BiosInfo",
    "ChronyTracking",
    "ConfSetting",
    "ContainerImage",
    "EthtoolCounter",
    "EthtoolDriver",
    "EthtoolFec",
    "EthtoolPause",
    "EthtoolSettings",
    "GidEntry",
    "IbPortAttrs",
    "IbvGid",
    "IbvPort",
    "IpAddress",
    "IpBrief",
    "IpLink",
    "IpLinkStats",
    "IpRoute",
    "Iperf3Result",
    "IptablesChain",
    "KernelEvent",
    "LldpNeighbor",
    "MemInfo",
    "MlnxQos",
    "NcclNetDevice",
    "NcclNetSelection",
    "NcclTestRow",
    "NcclTestSummary",
    "NcclWarning",
    "NmConnection",
    "PcieLink",
    "PerftestBandwidth",
    "PerftestError",
    "PerftestHeader",
    "PerftestLatency",
    "PingResult",
    "QosTrafficClass",
    "RdmaHwCounter",
    "RdmaLink",
    "RdmaNetdev",
    "Record",
    "RouterosCommand",
]
