"""Print-only ``/ip`` menus a monitoring client reads (mktxp's defaults), as RouterOS 7 has
them on a switch that routes nothing and filters nothing:

- ``/ip/route``: the connected route of every valid, enabled ``/ip/address`` (no other route
  exists: nothing in the emulator adds one), active while its interface runs;
- ``/ip/firewall/filter``, ``nat``, ``raw``, ``mangle``, ``/ip/firewall/connection``: empty;
  ``/ip/firewall/connection/tracking``: RouterOS's defaults (``enabled=auto``, inactive with
  no firewall rule);
- ``/ip/pool``, ``/ip/pool/used``, ``/ip/dhcp-server``, ``/ip/dhcp-server/lease``: empty (a
  CRS's default configuration has no DHCP server).
"""

from __future__ import annotations

import ipaddress

from ..device import Device
from .address import address_rows
from .base import Handler, Menu, Reply, Request, Row, print_reply, yes

#: RouterOS numbers dynamic routes from 0x80000000 up.
DYNAMIC_ID = 0x80000000
#: ``/ip/firewall/connection/tracking`` as a RouterOS 7 switch starts (timeouts: defaults).
TRACKING: Row = {
    "enabled": "auto", "tcp-syn-sent-timeout": "5s", "tcp-syn-received-timeout": "5s",
    "tcp-established-timeout": "1d", "tcp-fin-wait-timeout": "10s",
    "tcp-close-wait-timeout": "10s", "tcp-last-ack-timeout": "10s",
    "tcp-time-wait-timeout": "10s", "tcp-close-timeout": "10s",
    "tcp-max-retrans-timeout": "5m", "tcp-unacked-timeout": "5m",
    "loose-tcp-tracking": "true", "liberal-tcp-tracking": "false", "udp-timeout": "30s",
    "udp-stream-timeout": "3m", "icmp-timeout": "10s", "generic-timeout": "10m",
    "active-ipv4": "false", "active-ipv6": "false", "max-entries": "1048576",
    "total-entries": "0", "total-ip4-entries": "0", "total-ip6-entries": "0",
}  # fmt: skip


def _running(dev: Device) -> dict[str, bool]:
    """Whether each interface runs now, by name (as ``/interface`` reports it)."""
    state, links = dev.load(), dev.links()
    out = {lane.name: dev.lane_view(lane, links).running for lane in state.lanes}
    out |= {e.name: dev.ether_view(e, links).running for e in state.ethers}
    for b in state.bridges:
        link = links.get(b.name)
        out[b.name] = bool(link and link.admin_up and not b.disabled)
    return out


def route_rows(dev: Device) -> list[Row]:
    running = _running(dev)
    rows: list[Row] = []
    for a in address_rows(dev):
        if a["invalid"] == "true" or a["disabled"] == "true":
            continue
        iface = a["actual-interface"]
        net = ipaddress.IPv4Interface(a["address"]).network
        active = running.get(iface, False)
        rows.append({
            ".id": f"*{DYNAMIC_ID + len(rows) + 1:X}", "dst-address": str(net),
            "routing-table": "main", "gateway": iface, "immediate-gw": iface, "distance": "0",
            "scope": "10", "suppress-hw-offload": "false",
            "local-address": f"{a['address'].split('/')[0]}%{iface}",
            "dynamic": "true", "inactive": yes(not active), "active": yes(active),
            "connect": "true", "hw-offloaded": "false",
        })
    return rows


def route_print(dev: Device, req: Request) -> Reply:
    return print_reply(route_rows(dev), req)


def tracking_print(dev: Device, req: Request) -> Reply:
    return print_reply([dict(TRACKING)], req)


def empty(dev: Device, req: Request) -> Reply:
    """A menu with nothing configured in it."""
    return print_reply([], req)


def printing(handler: Handler) -> dict[str, Handler]:
    return {"print": handler, "getall": handler}


MENUS = (
    Menu("/ip/route", printing(route_print)),
    *(Menu(f"/ip/firewall/{table}", printing(empty))
      for table in ("filter", "nat", "raw", "mangle", "connection")),
    Menu("/ip/firewall/connection/tracking", printing(tracking_print)),
    *(Menu(path, printing(empty)) for path in ("/ip/pool", "/ip/pool/used", "/ip/dhcp-server",
                                               "/ip/dhcp-server/lease")),
)
