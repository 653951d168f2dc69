"""What a DGX Spark is to push, as data: the files push manages, the twins' ARP policy, where
RoCE ECN lives, and how a login becomes root."""

from __future__ import annotations

NETPLAN_PATH = "/etc/netplan/40-fabric.yaml"
#: The fabric twins' ARP policy, persisted (applied at boot by systemd-sysctl / udev).
SYSCTL_PATH = "/etc/sysctl.d/40-fabric.conf"
#: Lossless RoCE on the twins (topology `qos: lossless`), persisted: the script sets DSCP
#: trust, PFC, ECN and the RDMA CM ToS; udev runs it for each twin and RDMA device as it appears
#: (at boot, where udev replays every device, and on cable hotplug).
QOS_SCRIPT_PATH = "/etc/fabric/roce-qos.sh"
QOS_RULES_PATH = "/etc/udev/rules.d/70-fabric-roce-qos.rules"
QOS_FILES = {QOS_SCRIPT_PATH: "755", QOS_RULES_PATH: "644"}
#: logind keeps an engine's semaphores and shared memory when a login ends (RemoveIPC=no;
#: systemd's default, yes, deletes them and vLLM's head hangs; `host.ipc` judges it).
LOGIND_PATH = "/etc/systemd/logind.conf.d/40-fabric.conf"
#: Every file push manages on a Spark, in the order it shows and writes them, with its mode
#: (the QoS files only where the topology is lossless).
SPARK_FILES = {NETPLAN_PATH: "600", SYSCTL_PATH: "644", LOGIND_PATH: "644", **QOS_FILES}
#: The managed files outside /etc/netplan (the snapshot reads every netplan file anyway).
OTHER_FILES = tuple(p for p in SPARK_FILES if not p.startswith("/etc/netplan/"))
#: ARP on every netdev that carries a twin's frames: both twins of a port hear every broadcast
#: on their cable, and by default each answers ARP for every local address ("ARP flux"), so a
#: peer can cache the wrong twin's MAC and its replies miss the twin that asked. Answer only for
#: addresses on the receiving netdev (1) and announce that netdev's own address (2).
ARP_POLICY = {"arp_ignore": "1", "arp_announce": "2"}
#: The management interface when the inventory names none (never touched by push).
DEFAULT_MGMT = "enP7s7"

#: Where the recipe's ECN for RoCE lives on a ConnectX netdev (notification / reaction point).
ECN_SYSFS = "/sys/class/net/{netdev}/ecn/roce_{point}/enable/{priority}"
ECN_POINTS = ("np", "rp")

#: How a Spark login becomes root: it is root, `sudo -n` works, sudo wants a password, no sudo.
PRIVILEGES = ("root", "sudo", "password", "no-sudo")
