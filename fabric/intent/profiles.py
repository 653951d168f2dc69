"""Link profiles (data in profiles.yaml): what a healthy link looks like."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml


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


@cache
def _raw_profiles() -> dict[str, Any]:
    text = resources.files("fabric.intent").joinpath("profiles.yaml").read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def profile_names() -> list[str]:
    return sorted(_raw_profiles())


def get_profile(name: str) -> LinkProfile:
    """The named profile; KeyError if there is none."""
    return LinkProfile(name=name, **_raw_profiles()[name])
