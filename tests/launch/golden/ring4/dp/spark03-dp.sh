#!/usr/bin/env bash
# data-parallel server launch
# Rendered by `fabric launch dp` for topology ring4 (intent b479ba72fc5ac8a6).
# Node spark03 is rank 2 of 4; entry node spark01.
# Do not edit: re-render after any change to the fabric, and re-validate first.
set -euo pipefail
# bootstrap/control only: a ring has no subnet shared by all nodes, so rendezvous uses the management interface; model data stays on NCCL_IB_HCA
export NCCL_SOCKET_IFNAME==enP7s7
# same interface for torch/gloo control traffic; a Spark has no eth0 and defaults pick Wi-Fi
export GLOO_SOCKET_IFNAME=enP7s7
# both twins of both ring ports: one twin alone caps a cable at ~100 Gb/s
export NCCL_IB_HCA==roceP2p1s0f0,roceP2p1s0f1,rocep1s0f0,rocep1s0f1
# the RoCE v2 GID index that `fabric validate` found identical on every node
export NCCL_IB_GID_INDEX=3
# NVIDIA's subnet-aware routing (its NCCL logs "Subnet-aware routing") keeps each queue pair between GIDs of one subnet. Each cable is its own subnet, so a peer is reached through the twin that faces it; stock NCCL times out on queue pairs to GIDs it cannot reach
export NCCL_IB_SUBNET_AWARE_ROUTING=1
# keep every RDMA device separate: rocep1s0f0 and rocep1s0f1 differ only by PCI function, so NCCL would merge them into one NIC, though on a ring they lead to different neighbours
export NCCL_IB_MERGE_NICS=0
# NCCL's own IB transport: a net plugin that an image ships (libnccl-net.so) would take over the RDMA devices without the ring's subnet-aware routing
export NCCL_NET_PLUGIN=none
# ring of 4+: stock NCCL also builds a tree that connects non-adjacent ranks and fails
export NCCL_ALGO=Ring
# Data parallel: one full server on this node; the front (nginx or sglang-router) spreads requests.
exec python3 -m sglang.launch_server \
  --model-path /models/DeepSeek-V4.1-Flash \
  --host 0.0.0.0 --port 30000
