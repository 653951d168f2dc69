#!/usr/bin/env bash
# vLLM + Ray TP4 PP1 launch
# Rendered by `fabric launch vllm` for topology star4 (intent 7659370ee1f8a5ac).
# Node spark02 is rank 1 of 4; entry node spark01.
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
# the IP Ray registers for this node (--node-ip-address): otherwise vLLM takes the default-route address and Ray finds "no GPUs on the driver node"
export VLLM_HOST_IP=10.210.0.2
# Ray worker joining the head on spark01.
# In container fabric-vllm-spark02 (registry.example/vllm:test): host network and IPC, every GPU,
# the RDMA devices, /models/DeepSeek-V4.1-Flash read-only, and the variables above (-e).
exec docker run --rm --name fabric-vllm-spark02 \
  --label "fabric.launch.run-id=${FABRIC_LAUNCH_RUN_ID:-manual}" \
  --network host --ipc host --gpus all \
  --device /dev/infiniband --cap-add IPC_LOCK --cap-add SYS_NICE \
  --ulimit memlock=-1 --ulimit stack=67108864 --shm-size 32g \
  -v /models/DeepSeek-V4.1-Flash:/models/DeepSeek-V4.1-Flash:ro \
  -e NCCL_SOCKET_IFNAME -e GLOO_SOCKET_IFNAME -e NCCL_IB_HCA -e NCCL_IB_GID_INDEX \
  -e NCCL_CROSS_NIC -e VLLM_HOST_IP \
  registry.example/vllm:test \
  ray start --block --address=10.210.0.1:6379 --node-ip-address=10.210.0.2
