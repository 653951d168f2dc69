"""Lossless RoCE, the Spark's half (topology `qos: lossless`): the twins' runtime QoS as
commands (mlnx_qos DSCP trust and PFC, RoCE ECN in sysfs, the RDMA CM ToS), from the recipe
both ends share (platforms.yaml `roce_qos`; the switch's half: `fabric.devices.crs804.qos`)."""

from __future__ import annotations

from fabric.devices.spark.platform import ECN_SYSFS
from fabric.intent.platforms import RoceQos, roce_qos


def ecn_path(netdev: str, point: str, r: RoceQos | None = None) -> str:
    return ECN_SYSFS.format(netdev=netdev, point=point, priority=(r or roce_qos()).priority)


def mlnx_qos_command(netdev: str) -> str:
    """`mlnx_qos -i NETDEV --trust dscp --pfc 0,0,0,1,0,0,0,0`."""
    return f"mlnx_qos -i {netdev} --trust dscp --pfc {roce_qos().pfc_bits}"


def dscp_map_command(netdev: str) -> str:
    """`mlnx_qos -i NETDEV --dscp2prio set,26,3` (mlnx_qos refuses it together with --trust)."""
    r = roce_qos()
    return f"mlnx_qos -i {netdev} --dscp2prio set,{r.dscp},{r.priority}"


def tos_command(rdma: str) -> str:
    """`cma_roce_tos -d RDMA -t 106`: RDMA CM connections of that device get the RoCE class."""
    return f"cma_roce_tos -d {rdma} -t {roce_qos().traffic_class_byte}"
