#!/usr/bin/env bash
# vLLM + Ray TP4 PP1 launch
# Rendered by `fabric launch vllm` for topology star4 (intent 7659370ee1f8a5ac).
# Node spark03 is rank 2 of 4; entry node spark01.
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
# Ray worker joining the head on spark01, in container
# fabric-vllm-spark03 (registry.example/vllm:test): host network and IPC, every GPU, the RDMA
# devices, /models/DeepSeek-V4.1-Flash read-only, and the variables above (-e).
exec docker run -i --rm --name fabric-vllm-spark03 \
  --label "fabric.launch.run-id=${FABRIC_LAUNCH_RUN_ID:-manual}" \
  --network host --ipc host --gpus all \
  --device /dev/infiniband --cap-add IPC_LOCK --cap-add SYS_NICE \
  --ulimit memlock=-1 --ulimit stack=67108864 --shm-size 32g \
  -v /models/DeepSeek-V4.1-Flash:/models/DeepSeek-V4.1-Flash:ro \
  -e NCCL_SOCKET_IFNAME -e GLOO_SOCKET_IFNAME -e NCCL_IB_HCA -e NCCL_IB_GID_INDEX \
  -e NCCL_CROSS_NIC -e NCCL_IB_SUBNET_AWARE_ROUTING -e VLLM_HOST_IP -e RAY_memory_monitor_refresh_ms \
  registry.example/vllm:test \
  bash -s <<'ENGINE'
set -euo pipefail
# Ray, which NVIDIA's NGC vLLM image lacks (its vLLM playbook installs it with pip): installed
# in this container when its python3 cannot import it.
python3 -c 'import ray' 2>/dev/null || { echo "fabric: image registry.example/vllm:test has no Ray: the script pip-installs 'ray[default]' in the container at every start (the node needs PyPI); to skip that, build an image with it (FROM registry.example/vllm:test, RUN pip install 'ray[default]') and pass it with --container" >&2; python3 -m pip install --no-cache-dir 'ray[default]'; }
exec ray start --block --address=10.210.0.1:6379 --node-ip-address=10.210.0.3
ENGINE
