"""The read-only snapshot of a Spark a push needs beyond its Facts: netplan and managed files,
`ip -j`, QoS and ARP state, tools, how the login becomes root."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fabric.devices.spark.netplan import ForeignDefinition, foreign_definitions, host_renderer


@dataclass(frozen=True)
class SparkSnapshot:
    """A Spark before (or after) a push: netplan and managed files, `ip -j` output, tools, SSH
    address."""

    host: str
    netplan: dict[str, str]  # path -> content
    ip_addr: list[dict[str, Any]]
    ip_link: list[dict[str, Any]]
    ip_route: list[dict[str, Any]]
    has_netplan: bool
    has_mlnx_qos: bool
    ssh_server_ip: str | None  # the address this SSH session arrived on
    qos: dict[str, str] = field(default_factory=dict)  # netdev -> `mlnx_qos -i` text
    pause: dict[str, str] = field(default_factory=dict)  # netdev -> `ethtool -a` text
    arp: dict[str, dict[str, str]] = field(default_factory=dict)  # netdev -> ARP sysctls
    files: dict[str, str] = field(default_factory=dict)  # other managed files: path -> content
    modes: dict[str, str] = field(default_factory=dict)  # path -> octal mode, files read
    user: str = "root"  # the login user
    privilege: str = "root"  # how it becomes root: PRIVILEGES
    netplan_ro: dict[str, str] = field(default_factory=dict)  # /lib, /run netplan: path -> text
    nm_keyfiles: dict[str, str] = field(default_factory=dict)  # NM profiles naming a twin
    unreadable: list[str] = field(default_factory=list)  # files it could not read (no root)
    #: netdev -> {"np": "0"|"1", "rp": ...}: RoCE ECN of the PFC priority in sysfs (a point
    #: whose file does not exist is absent: not an mlx5 netdev)
    ecn: dict[str, dict[str, str]] = field(default_factory=dict)
    roce_tos: dict[str, str] = field(default_factory=dict)  # RDMA device -> cma_roce_tos
    has_cma_roce_tos: bool = False
    rdma_present: list[str] = field(default_factory=list)  # RDMA devices that exist now

    @property
    def can_write(self) -> bool:
        """Whether this login can change the host: root, or passwordless `sudo -n`."""
        return self.privilege in ("root", "sudo")

    def all_netplan(self) -> dict[str, str]:
        """Every netplan file netplan reads on this host (/lib, /etc, /run)."""
        return {**self.netplan_ro, **self.netplan}

    def renderer(self, ours: str) -> tuple[str, str | None]:
        """The host's default netplan renderer and the file that sets it (ours ignored)."""
        return host_renderer(self.all_netplan(), ours)

    def foreign(self, ours: str, netdevs: Iterable[str]) -> list[ForeignDefinition]:
        """Other netplan files and NetworkManager profiles that define `netdevs`."""
        macs = {str(x.get("ifname")): str(x.get("address", "")).lower() for x in self.ip_addr}
        return foreign_definitions(self.all_netplan(), ours, netdevs, self.nm_keyfiles, macs)

    def file(self, path: str) -> str | None:
        """Content of a managed file (netplan or other) as read; None: it did not exist."""
        return self.netplan.get(path, self.files.get(path, self.nm_keyfiles.get(path)))

    def connected_netdev(self) -> str | None:
        """The netdev that carries the SSH session's server address (never to be touched)."""
        if not self.ssh_server_ip:
            return None
        ip = ipaddress.ip_address(self.ssh_server_ip)
        for link in self.ip_addr:
            for a in link.get("addr_info", []):
                if a.get("local") and ipaddress.ip_address(a["local"]) == ip:
                    return str(link["ifname"])
        return None

    def netdev(self, name: str) -> dict[str, Any] | None:
        return next((x for x in self.ip_addr if x.get("ifname") == name), None)

    def stacked_on(self, name: str) -> str | None:
        """The netdev `name` is stacked on (macvlan/vlan lower) in this host, if any."""
        link = next((x for x in self.ip_link if x.get("ifname") == name), None)
        lower = link.get("link") if link else None
        return str(lower) if lower else None
