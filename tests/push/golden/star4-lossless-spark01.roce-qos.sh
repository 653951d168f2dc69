#!/bin/sh
# /etc/fabric/roce-qos.sh - written by `fabric push` from topology star4-lossless (qos: lossless); edits here are undone.
# Lossless RoCE on the fabric twins, the hosts' half of the switch's lossless class: trust DSCP,
# PFC on priority 3 only, ECN for RoCE on priority 3 (notification and reaction point, where
# the driver has it), RDMA CM connections with ToS 106 (DSCP 26, ECN-capable).
# udev runs it for each twin and RDMA device as it appears, at boot and on cable hotplug
# (/etc/udev/rules.d/70-fabric-roce-qos.rules). Usage: /etc/fabric/roce-qos.sh [NETDEV|RDMA] (none: every twin).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
only=${1-}
rc=0
twin() {
  netdev=$1 rdma=$2
  [ -z "$only" ] || [ "$only" = "$netdev" ] || [ "$only" = "$rdma" ] || return 0
  if [ -e "/sys/class/net/$netdev" ]; then
    mlnx_qos -i "$netdev" --trust dscp --pfc 0,0,0,1,0,0,0,0 >/dev/null || rc=1
    f=/sys/class/net/$netdev/ecn/roce_np/enable/3
    if [ -e "$f" ]; then echo 1 > "$f" || rc=1; fi
    f=/sys/class/net/$netdev/ecn/roce_rp/enable/3
    if [ -e "$f" ]; then echo 1 > "$f" || rc=1; fi
  fi
  if [ -e "/sys/class/infiniband/$rdma" ] && command -v cma_roce_tos >/dev/null; then
    cma_roce_tos -d "$rdma" -t 106 >/dev/null || rc=1
  fi
}
twin enp1s0f0np0 rocep1s0f0
twin enP2p1s0f0np0 roceP2p1s0f0
exit $rc
