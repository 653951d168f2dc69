#!/usr/bin/env bash
# vLLM + Ray TP4 PP1 launch
# Rendered by `fabric launch vllm` for topology ring4 (intent b479ba72fc5ac8a6).
# Node spark04 is rank 3 of 4; entry node spark01.
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
# the IP Ray registers for this node (--node-ip-address): otherwise vLLM takes the default-route address and Ray finds "no GPUs on the driver node"
export VLLM_HOST_IP=192.0.2.4
# Ray's memory monitor off, for every `ray start` and the engine: on GB10's unified memory the GPU's allocations count as host RAM, and the monitor kills the workers holding the weights (NVIDIA's, sparkrun's and spark-vllm-docker's setups all set it)
export RAY_memory_monitor_refresh_ms=0
# Ray worker joining the head on spark01, in container
# fabric-vllm-spark04 (registry.example/vllm:test): host network and IPC, every GPU, the RDMA
# devices, /models/DeepSeek-V4.1-Flash read-only, and the variables above (-e).
exec docker run -i --rm --name fabric-vllm-spark04 \
  --label "fabric.launch.run-id=${FABRIC_LAUNCH_RUN_ID:-manual}" \
  --network host --ipc host --gpus all \
  --device /dev/infiniband --cap-add IPC_LOCK --cap-add SYS_NICE \
  --ulimit memlock=-1 --ulimit stack=67108864 --shm-size 32g \
  -v /models/DeepSeek-V4.1-Flash:/models/DeepSeek-V4.1-Flash:ro \
  -e NCCL_SOCKET_IFNAME -e GLOO_SOCKET_IFNAME -e NCCL_IB_HCA -e NCCL_IB_GID_INDEX \
  -e NCCL_IB_SUBNET_AWARE_ROUTING -e NCCL_IB_MERGE_NICS -e NCCL_NET_PLUGIN -e NCCL_ALGO \
  -e VLLM_HOST_IP -e RAY_memory_monitor_refresh_ms \
  registry.example/vllm:test \
  bash -s <<'ENGINE'
set -euo pipefail
# Ray, which NVIDIA's NGC vLLM image lacks (its vLLM playbook installs it with pip): installed
# in this container when its python3 cannot import it.
python3 -c 'import ray' 2>/dev/null || { echo "fabric: image registry.example/vllm:test has no Ray: the script pip-installs 'ray[default]' in the container at every start (the node needs PyPI); to skip that, build an image with it (FROM registry.example/vllm:test, RUN pip install 'ray[default]') and pass it with --container" >&2; python3 -m pip install --no-cache-dir 'ray[default]'; }
exec ray start --block --address=192.0.2.1:6379 --node-ip-address=192.0.2.4
ENGINE
