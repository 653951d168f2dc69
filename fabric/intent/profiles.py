"""Link profiles (data in profiles.yaml): what a healthy link looks like."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from fabric.intent.yamlsource import load_text


@dataclass(frozen=True)
class CounterThresholds:
    """The most a healthy link's counters may grow over one validation run (`counters.*`).

    Counts are deltas between the snapshots taken before and after the active probes; the
    drop limit is a fraction of the packets the same counter source saw in that window, and
    never less than `drops_floor` (a ratio over a handful of frames is not evidence).
    """

    flaps_max: int = 0  # carrier changes, link-down events, RouterOS link-downs
    errors_max: int = 0  # CRC, symbol, FEC-uncorrectable, FCS, rx/tx errors
    drops_max_ratio: float = 0.0  # dropped / packets, per counter and direction
    drops_floor: int = 0  # the fewest drops that may fail: below it the sample is too small
    retrans_max: int = 0  # RoCE retransmission events (hw_counters)
    pause_max: int = 0  # pause frames on priorities without PFC
    pause_status: str = "warn"  # what pause frames above pause_max give: "warn" or "fail"

    def __post_init__(self) -> None:
        if self.pause_status not in ("warn", "fail"):
            raise ValueError(f"counters.pause_status must be warn or fail, "
                             f"not {self.pause_status!r}")


@dataclass(frozen=True)
class LinkProfile:
    """Expected values for one kind of link. `None` means "not judged in this profile"."""

    name: str
    description: str
    ethtool_speed_mbps: int
    rdma: bool
    gid_type: str | None
    rdma_write_min_gbps_per_twin: float | None
    rdma_write_min_gbps_both_twins: float | None
    tcp_min_gbps: float | None
    straggler_fraction: float
    nccl_busbw_min_gbytes: float | None
    time_offset_max_s: float
    bandwidth_test_s: float = 10.0  # seconds per bandwidth test phase (overridable per run)
    iperf3_rate_per_twin: str | None = None  # iperf3 -b per twin (None: unlimited)
    #: At most this many bandwidth tests at once (None: as many as share no resource); for
    #: a machine whose CPU, not its cables, caps what runs at once (the lab's veths).
    bandwidth_tests_per_round: int | None = None
    counters: CounterThresholds = field(default_factory=CounterThresholds)
    #: Each twin's PCIe function: the link speed (GT/s) and width a healthy one trains to
    #: (None: the link has no PCIe function to judge, e.g. veth).
    pcie_speed_gts: float | None = None
    pcie_width: int | None = None
    #: Memory a host keeps free beyond the nccl-tests buffers validate allocates, GiB.
    memory_headroom_gib: float = 4.0


@cache
def _raw_profiles() -> dict[str, Any]:
    text = resources.files("fabric.intent").joinpath("profiles.yaml").read_text()
    data: dict[str, Any] = load_text(text)
    return data


def profile_names() -> list[str]:
    return sorted(_raw_profiles())


def get_profile(name: str) -> LinkProfile:
    """The named profile; KeyError if there is none."""
    raw = dict(_raw_profiles()[name])
    counters = CounterThresholds(**raw.pop("counters", {}))
    return LinkProfile(name=name, counters=counters, **raw)
