#!/usr/bin/env bash
# data-parallel server launch
# Rendered by `fabric launch dp` for topology star8 (intent d74f15205c3cd24a).
# Node spark01 is rank 0 of 8; entry node spark01.
# Do not edit: re-render after any change to the fabric, and re-validate first.
set -euo pipefail
# bootstrap/control on rail 0 (10.210.0.0/24); never the management route
export NCCL_SOCKET_IFNAME==enp1s0f0np0
# torch/gloo control on the same rail; a Spark has no eth0 and defaults pick Wi-Fi
export GLOO_SOCKET_IFNAME=enp1s0f0np0
# both twins of p0: one twin alone caps the cable at ~100 Gb/s (98 vs 161 Gb/s measured)
export NCCL_IB_HCA==rocep1s0f0,roceP2p1s0f0
# the RoCE v2 GID index that `fabric validate` found identical on every node
export NCCL_IB_GID_INDEX=3
# 2 rails (10.210.0.0/24, 10.210.1.0/24): a twin-A to twin-B queue pair cannot cross rails, so each NCCL channel keeps to one rail
export NCCL_CROSS_NIC=0
# NVIDIA's subnet-aware routing (its NCCL logs "Subnet-aware routing") keeps each queue pair between GIDs of one subnet. Through the switch a twin-A GID reaches only twin-A GIDs (one subnet per rail); NVIDIA sets it on switched clusters too
export NCCL_IB_SUBNET_AWARE_ROUTING=1
# Data parallel: one full server on this node; the front (nginx or sglang-router) spreads requests.
exec python3 -m sglang.launch_server \
  --model-path /models/DeepSeek-V4.1-Flash \
  --host 0.0.0.0 --port 30000
