# crs804 (crs804-4ddq-hrm) - desired state from topology star4-lossless, rendered by `fabric push`.
# Only the lanes below are managed; every other lane is left alone.
/interface ethernet
# qsfp56-dd-1-1: qsfp56-dd-1 in mode 1x200G, cabled to spark01
set [ find default-name=qsfp56-dd-1-1 ] auto-negotiation=no speed=200G-baseCR4 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-2-1: qsfp56-dd-2 in mode 1x200G, cabled to spark02
set [ find default-name=qsfp56-dd-2-1 ] auto-negotiation=no speed=200G-baseCR4 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-3-1: qsfp56-dd-3 in mode 1x200G, cabled to spark03
set [ find default-name=qsfp56-dd-3-1 ] auto-negotiation=no speed=200G-baseCR4 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-4-1: qsfp56-dd-4 in mode 1x200G, cabled to spark04
set [ find default-name=qsfp56-dd-4-1 ] auto-negotiation=no speed=200G-baseCR4 fec-mode=fec91 mtu=9000 l2mtu=9216
/interface bridge
# created only if absent: the one hardware-offloaded bridge
:if ([:len [find name="bridge"]] = 0) do={ add name="bridge" }
/interface bridge port
# each lane added to the bridge, or moved into it where it is a port already
:if ([:len [find interface="qsfp56-dd-1-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-1-1" hw=yes } else={ set [find interface="qsfp56-dd-1-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-2-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-2-1" hw=yes } else={ set [find interface="qsfp56-dd-2-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-3-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-3-1" hw=yes } else={ set [find interface="qsfp56-dd-3-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-4-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-4-1" hw=yes } else={ set [find interface="qsfp56-dd-4-1"] bridge="bridge" hw=yes disabled=no }
/ip neighbor discovery-settings
# lldp added to the protocols already enabled (cdp and mndp stay as they are)
:if ([:typeof [:find [get protocol] "lldp"]] = "nil") do={ set protocol=([get protocol],"lldp") }
# qos: lossless on RouterOS 7.19.4 (stable) - QoS profile, DSCP map, port and PFC menus (7.15-7.22):
# DSCP 26 (RoCE) -> traffic class 3 with PFC and ECN on the Spark-facing lanes, DSCP 48 (CNP) ->
# a strict class, then QoS hardware offload and LLDP DCBX (MikroTik manual "Quality of Service").
/interface/ethernet/switch/qos/profile add name=roce dscp=26 traffic-class=3
/interface/ethernet/switch/qos/profile add name=cnp dscp=48 traffic-class=6
/interface/ethernet/switch/qos/map/ip add dscp=26 profile=roce
/interface/ethernet/switch/qos/map/ip add dscp=48 profile=cnp
/interface/ethernet/switch/qos/tx-manager/queue set [ find tx-manager=default traffic-class=1 ] schedule=high-priority-group weight=1
/interface/ethernet/switch/qos/tx-manager/queue set [ find tx-manager=default traffic-class=3 ] schedule=high-priority-group weight=1 ecn=yes use-shared-buffers=yes
/interface/ethernet/switch/qos/tx-manager/queue set [ find tx-manager=default traffic-class=6 ] schedule=strict-priority
/interface/ethernet/switch/qos/priority-flow-control add name=pfc-tc3 traffic-class=3 rx=yes tx=yes
/interface/ethernet/switch/qos/port set qsfp56-dd-1-1 trust-l3=keep pfc=pfc-tc3 egress-rate-queue3=0
/interface/ethernet/switch/qos/port set qsfp56-dd-2-1 trust-l3=keep pfc=pfc-tc3 egress-rate-queue3=0
/interface/ethernet/switch/qos/port set qsfp56-dd-3-1 trust-l3=keep pfc=pfc-tc3 egress-rate-queue3=0
/interface/ethernet/switch/qos/port set qsfp56-dd-4-1 trust-l3=keep pfc=pfc-tc3 egress-rate-queue3=0
/interface/ethernet/switch set switch1 qos-hw-offloading=yes
/ip/neighbor/discovery-settings set lldp-dcbx=yes
