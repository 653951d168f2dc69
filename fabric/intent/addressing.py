"""Addressing rules (DOMAIN.md): deterministic, and stable when nodes are added.

- Switch: two cluster-wide rails; every twin A in rails[0], every twin B in rails[1].
- Direct cable: one subnet per twin per cable, carved from the `direct` pool.
- A host's address in a subnet is `network + node_id`, so it never depends on how many
  other nodes exist: adding spark05..08 cannot renumber spark01..04.
"""

from __future__ import annotations

import ipaddress

IPv4Net = ipaddress.IPv4Network


def pair_index(node_a: int, node_b: int) -> int:
    """Stable index of an unordered node pair; independent of how many nodes exist."""
    lo, hi = sorted((node_a, node_b))
    return (hi - 1) * (hi - 2) // 2 + (lo - 1)


def direct_subnet(pool: IPv4Net, prefix: int, node_a: int, node_b: int, parallel: int,
                  twin: int) -> IPv4Net | None:
    """The subnet of one twin on one direct cable; None if the pool is too small."""
    index = (pair_index(node_a, node_b) * 2 + parallel) * 2 + twin
    if prefix < pool.prefixlen:
        return None
    count = 2 ** (prefix - pool.prefixlen)
    if index >= count:
        return None
    size = 2 ** (32 - prefix)
    return ipaddress.IPv4Network((int(pool.network_address) + index * size, prefix))


def host_address(subnet: IPv4Net, node_id: int) -> ipaddress.IPv4Interface | None:
    """`network + node_id` with the subnet's prefix; None if it does not fit."""
    if node_id >= subnet.num_addresses - 1:
        return None
    return ipaddress.IPv4Interface((int(subnet.network_address) + node_id, subnet.prefixlen))
