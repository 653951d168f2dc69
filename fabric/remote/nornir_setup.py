"""Build a Nornir object for a Target: SimpleInventory from its files, credentials from the
Target (never from the files), host-key verification on, hosts limited to the intent.

The Sparks' sessions are `SPARK_SSH` (exec channels on a paramiko transport,
`fabric.remote.transport`); the switch has `routeros_api` and, for its CLI, Netmiko's
`netmiko`. Nornir's `InitNornir` would load every installed connection plugin, Netmiko's with
its every vendor driver; `make_nornir` registers the toolkit's two, and `netmiko` is loaded
where a task asks for it (`netmiko_connection`). The inventory and runner plugins are Nornir's
own classes, built directly: its `load_inventory` and `load_runner` would first scan every
installed distribution's entry points for plugins (two scans, 4-9 ms each with this repo's
60 distributions, more on a larger environment) to find the same two classes.
"""

from __future__ import annotations

import threading
from typing import Any

from nornir.core import Nornir
from nornir.core.configuration import Config
from nornir.core.inventory import ConnectionOptions
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.core.state import GlobalState
from nornir.core.task import Task
from nornir.plugins.inventory.simple import SimpleInventory
from nornir.plugins.runners import ThreadedRunner

from fabric.remote.routeros_api import RouterOsApiConnection
from fabric.remote.transport import SPARK_SSH, SparkSSH
from fabric.target import Target

_NETMIKO_LOAD = threading.Lock()


def netmiko_connection(task: Task) -> Any:
    """The host's Netmiko session (the switch's CLI), Netmiko's plugin loaded on first use."""
    with _NETMIKO_LOAD:
        if "netmiko" not in ConnectionPluginRegister.available:
            from nornir_netmiko.connections import Netmiko

            ConnectionPluginRegister.register("netmiko", Netmiko)
    return task.host.get_connection("netmiko", task.nornir.config)


def ssh_extras(target: Target) -> dict[str, Any]:
    """SSH connection extras (Netmiko's names, which `SPARK_SSH` reads too): keys, and strict
    host-key checking against known_hosts."""
    c = target.credentials
    extras: dict[str, Any] = {
        "ssh_strict": c.strict_host_keys,
        "system_host_keys": False,
        "alt_host_keys": c.known_hosts is not None,
        "allow_agent": False,
        "conn_timeout": 10,
        "auth_timeout": 10,
        "banner_timeout": 10,
    }
    if c.known_hosts is not None:
        extras["alt_key_file"] = str(c.known_hosts)
    if c.ssh_key is not None:
        extras["use_keys"] = True
        extras["key_file"] = str(c.ssh_key)
    return extras


def routeros_extras(target: Target) -> dict[str, Any]:
    """routeros-api options: plain login; api-ssl with verification when asked for."""
    c = target.credentials
    extras: dict[str, Any] = {"plaintext_login": True}
    if c.routeros_tls:
        extras.update(use_ssl=True, ssl_verify=True, ssl_verify_hostname=True)
        if c.routeros_ca is not None:
            extras["ca_file"] = str(c.routeros_ca)
    return extras


def make_nornir(target: Target, hosts: list[str] | None = None, workers: int = 8) -> Nornir:
    """A Nornir for the target's hosts that are in the intent (or the `hosts` given)."""
    inv = target.inventory_dir
    ConnectionPluginRegister.register(SPARK_SSH, SparkSSH)
    ConnectionPluginRegister.register("routeros_api", RouterOsApiConnection)
    files = {"host_file": str(inv / "hosts.yaml"), "group_file": str(inv / "groups.yaml"),
             "defaults_file": str(inv / "defaults.yaml")}
    config = Config.from_dict(
        runner={"plugin": "threaded", "options": {"num_workers": workers}},
        inventory={"plugin": "SimpleInventory", "options": files},
        logging={"enabled": False},
    )
    nr = Nornir(inventory=SimpleInventory(**files).load(),
                runner=ThreadedRunner(num_workers=workers), config=config,
                data=GlobalState(dry_run=False))
    wanted = set(hosts) if hosts is not None else set(target.intent.cabled)
    nr = nr.filter(filter_func=lambda h: h.name in wanted)
    c = target.credentials
    for host in nr.inventory.hosts.values():
        role = host.get("role")
        if role == "switch":
            host.username = c.routeros_user
            host.password = c.routeros_password
            host.connection_options["routeros_api"] = ConnectionOptions(
                hostname=host.hostname, port=c.routeros_port, username=c.routeros_user,
                password=c.routeros_password, extras=routeros_extras(target))
            host.connection_options["netmiko"] = ConnectionOptions(
                extras=ssh_extras(target))
        else:
            host.username = c.ssh_user
            host.password = c.ssh_password
            host.connection_options[SPARK_SSH] = ConnectionOptions(extras=ssh_extras(target))
    return nr
