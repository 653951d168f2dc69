"""Rollback commands rebuild a netdev from its `ip -j addr` record (IPv4; IPv6 untouched)."""

from __future__ import annotations

from fabric.tasks.restore_spark_backup import restore_commands


def test_restore_commands_rebuild_mtu_addresses_and_admin_state() -> None:
    link = {"ifname": "enp1s0f0np0", "mtu": 1500, "flags": ["BROADCAST", "MULTICAST"],
            "addr_info": [
                {"family": "inet", "local": "10.0.0.1", "prefixlen": 24},
                {"family": "inet", "local": "10.0.1.1", "prefixlen": 24,
                 "broadcast": "10.0.1.255"},
                {"family": "inet6", "local": "fe80::1", "prefixlen": 64}]}
    assert restore_commands(link) == [
        "ip link set dev enp1s0f0np0 mtu 1500", "ip -4 addr flush dev enp1s0f0np0",
        "ip addr add 10.0.0.1/24 dev enp1s0f0np0",
        "ip addr add 10.0.1.1/24 broadcast 10.0.1.255 dev enp1s0f0np0",
        "ip link set dev enp1s0f0np0 down"]


def test_arp_restore_puts_recorded_sysctls_back() -> None:
    from fabric.tasks.restore_spark_backup import arp_restore

    assert arp_restore("cx7-p0", {"arp_ignore": "0", "arp_announce": "0"}) == [
        "sysctl -qw net.ipv4.conf.cx7-p0.arp_announce=0 net.ipv4.conf.cx7-p0.arp_ignore=0"]
    assert arp_restore("cx7-p0", {}) == []
