#!/usr/bin/env bash
# vLLM + Ray TP8 PP1 launch
# Rendered by `fabric launch vllm` for topology star8 (intent d74f15205c3cd24a).
# Node spark03 is rank 2 of 8; entry node spark01.
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
# the IP Ray registers for this node (--node-ip-address): otherwise vLLM takes the default-route address and Ray finds "no GPUs on the driver node"
export VLLM_HOST_IP=10.210.0.3
# Ray's memory monitor off, for every `ray start` and the engine: on GB10's unified memory the GPU's allocations count as host RAM, and the monitor kills the workers holding the weights (NVIDIA's, sparkrun's and spark-vllm-docker's setups all set it)
export RAY_memory_monitor_refresh_ms=0
# Ray worker joining the head on spark01.
# Ray must be on this node already: bare metal, the launch installs nothing here.
python3 -c 'import ray' 2>/dev/null || { echo "fabric: no Ray for python3 on spark03: pip install 'ray[default]' on every node, or launch in a container (--container default)" >&2; exit 1; }
exec ray start --block --address=10.210.0.1:6379 --node-ip-address=10.210.0.3
