"""Read the switch's QoS (for `qos.consistent`) over an open RouterOS API session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabric.facts import SwitchQosFact
from fabric.push.backup_switch_config import read_qos_rows
from fabric.push.qos import switch_qos_fact


def read_switch_qos(api: Any, version: str,
                    discovery: Mapping[str, str] | None = None) -> SwitchQosFact:
    """The switch chip's QoS offload, DSCP map, queues, lossless classes and every port's trust
    and PFC, from the QoS menus (read-only); a RouterOS without them gives a fact with `error`
    (e.g. `no such command prefix` below 7.15). `discovery`: the discovery-settings row
    already read (LLDP DCBX)."""
    rows, error = read_qos_rows(api)
    if error is not None:
        return switch_qos_fact({}, version, error=f"RouterOS {version}: {error}")
    return switch_qos_fact(rows, version, discovery)
