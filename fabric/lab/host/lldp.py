"""lldpd in every lab host: system name = hostname, port id = interface name."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from fabric.lab import ns
from fabric.lab.host.hostenv import host_path

LLDPD = "/usr/sbin/lldpd"
#: Shorter than lldpd's 30 s default so a re-cabled lab settles quickly (TTL = 4 x this).
TX_INTERVAL_S = 10


def config(hostname: str) -> str:
    return (f"configure system hostname {hostname}\n"
            "configure lldp portidsubtype ifname\n"
            f"configure lldp tx-interval {TX_INTERVAL_S}\n")


def start(holder_pid: int, host: str, interfaces: Sequence[str], mgmt_ip: str,
          conf: Path, log: Path) -> int:
    """Start lldpd on exactly `interfaces` and wait until its control socket answers; its pid.

    lldpd skips macvlans when matched by a wildcard but uses any interface named exactly, so
    the twins are listed by name.
    """
    argv = [LLDPD, "-d", "-I", ",".join(interfaces), "-m", mgmt_ip, "-O", str(conf)]
    pid = ns.spawn(ns.in_host(holder_pid, argv), log)
    sock = host_path(holder_pid, "/run/lldpd.socket")
    ns.wait_until(f"{host}: lldpd", lambda: ns.unix_socket_open(sock), timeout=15,
                  failed=lambda: ns.exited_with(pid, log))
    return pid


def configured(holder_pid: int) -> bool:
    """Has lldpd applied our configuration file (it runs it itself, after its socket opens)?

    Until then lldpd is paused: an `lldpcli update` is lost and frames from peers are not
    taken in, so neighbors would only appear a whole tx-interval later.
    """
    out = ns.run(ns.in_host(holder_pid, ["lldpcli", "-f", "json", "show", "configuration"]),
                 check=False)
    try:
        conf = json.loads(out)["configuration"]["config"]
    except (ValueError, KeyError, TypeError):
        return False
    return bool(conf.get("tx-delay") == str(TX_INTERVAL_S)
                and conf.get("lldp-portid-type") == "ifname")


def announce_all(holders: Mapping[str, int]) -> None:
    """Wait until every host's lldpd runs our configuration, then make each send an LLDPDU
    on every interface now (`lldpcli update`): no first frame is lost to a paused peer."""
    for host, pid in holders.items():
        ns.wait_until(f"{host}: lldpd configuration", partial(configured, pid), timeout=15)
    for pid in holders.values():
        ns.run(ns.in_host(pid, ["lldpcli", "update"]))
