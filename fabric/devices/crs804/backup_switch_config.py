"""Nornir task: snapshot every RouterOS item push may touch, plus `/export terse` over SSH."""

from __future__ import annotations

from nornir.core.task import Result, Task

from fabric.devices.crs804.platform import SWITCH_PATHS
from fabric.devices.crs804.read_switch_qos import read_qos_rows
from fabric.devices.crs804.snapshot import SwitchSnapshot
from fabric.remote.nornir_setup import netmiko_connection
from fabric.remote.shell import ros_rows, routeros


def backup_switch_config(task: Task, export: bool = False, qos: bool = False) -> Result:
    """Read (never change) the touched menus; with `qos` the switch QoS menus too (a RouterOS
    without them is recorded in `qos_error`); with `export`, `/export terse` via Netmiko SSH."""
    api = routeros(task)
    rows = {path: ros_rows(api, path) for path in SWITCH_PATHS}
    qos_error = None
    if qos:
        got, qos_error = read_qos_rows(api)
        rows |= got
    addresses = ros_rows(api, "/ip/address")
    session = _session_address(task)
    connected = next((a.get("interface") for a in addresses
                      if session and a.get("address", "").split("/")[0] == session), None)
    text, why = (_export(task) if export else (None, None))
    snap = SwitchSnapshot(host=task.host.name, rows=rows, export=text, export_error=why,
                          connected_interface=connected, addresses=addresses,
                          session_address=session, qos_error=qos_error)
    return Result(host=task.host, result=snap, changed=False)


def _session_address(task: Task) -> str | None:
    """The switch's end of this API session's TCP connection (not the inventory hostname,
    which may be a DNS name or reach the switch through a VPN)."""
    plugin = task.host.connections.get("routeros_api")
    endpoints = getattr(plugin, "endpoints", None)
    ends = endpoints() if callable(endpoints) else None
    return ends[1] if ends else None


def _export(task: Task) -> tuple[str | None, str | None]:
    """`/export terse` text, or why it could not be taken (the JSON snapshot still is)."""
    try:
        conn = netmiko_connection(task)
        text: str = conn.send_command("/export terse", read_timeout=30)
        return text, None
    except Exception as exc:
        return None, f"/export terse over SSH failed: {type(exc).__name__}: {exc}"
