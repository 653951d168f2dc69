# crs804 (crs804-4ddq-hrm) - desired state from topology star16, rendered by `fabric push`.
# Only the lanes below are managed; every other lane is left alone.
/interface ethernet
# qsfp56-dd-1-1: qsfp56-dd-1 in mode 4x100G, cabled to spark01
set [ find default-name=qsfp56-dd-1-1 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-1-3: qsfp56-dd-1 in mode 4x100G, cabled to spark02
set [ find default-name=qsfp56-dd-1-3 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-1-5: qsfp56-dd-1 in mode 4x100G, cabled to spark03
set [ find default-name=qsfp56-dd-1-5 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-1-7: qsfp56-dd-1 in mode 4x100G, cabled to spark04
set [ find default-name=qsfp56-dd-1-7 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-2-1: qsfp56-dd-2 in mode 4x100G, cabled to spark05
set [ find default-name=qsfp56-dd-2-1 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-2-3: qsfp56-dd-2 in mode 4x100G, cabled to spark06
set [ find default-name=qsfp56-dd-2-3 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-2-5: qsfp56-dd-2 in mode 4x100G, cabled to spark07
set [ find default-name=qsfp56-dd-2-5 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-2-7: qsfp56-dd-2 in mode 4x100G, cabled to spark08
set [ find default-name=qsfp56-dd-2-7 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-3-1: qsfp56-dd-3 in mode 4x100G, cabled to spark09
set [ find default-name=qsfp56-dd-3-1 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-3-3: qsfp56-dd-3 in mode 4x100G, cabled to spark10
set [ find default-name=qsfp56-dd-3-3 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-3-5: qsfp56-dd-3 in mode 4x100G, cabled to spark11
set [ find default-name=qsfp56-dd-3-5 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-3-7: qsfp56-dd-3 in mode 4x100G, cabled to spark12
set [ find default-name=qsfp56-dd-3-7 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-4-1: qsfp56-dd-4 in mode 4x100G, cabled to spark13
set [ find default-name=qsfp56-dd-4-1 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-4-3: qsfp56-dd-4 in mode 4x100G, cabled to spark14
set [ find default-name=qsfp56-dd-4-3 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-4-5: qsfp56-dd-4 in mode 4x100G, cabled to spark15
set [ find default-name=qsfp56-dd-4-5 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
# qsfp56-dd-4-7: qsfp56-dd-4 in mode 4x100G, cabled to spark16
set [ find default-name=qsfp56-dd-4-7 ] auto-negotiation=no speed=100G-baseCR2 fec-mode=fec91 mtu=9000 l2mtu=9216
/interface bridge
# created only if absent: the one hardware-offloaded bridge
:if ([:len [find name="bridge"]] = 0) do={ add name="bridge" }
/interface bridge port
# each lane added to the bridge, or moved into it where it is a port already
:if ([:len [find interface="qsfp56-dd-1-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-1-1" hw=yes } else={ set [find interface="qsfp56-dd-1-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-1-3"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-1-3" hw=yes } else={ set [find interface="qsfp56-dd-1-3"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-1-5"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-1-5" hw=yes } else={ set [find interface="qsfp56-dd-1-5"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-1-7"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-1-7" hw=yes } else={ set [find interface="qsfp56-dd-1-7"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-2-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-2-1" hw=yes } else={ set [find interface="qsfp56-dd-2-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-2-3"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-2-3" hw=yes } else={ set [find interface="qsfp56-dd-2-3"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-2-5"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-2-5" hw=yes } else={ set [find interface="qsfp56-dd-2-5"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-2-7"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-2-7" hw=yes } else={ set [find interface="qsfp56-dd-2-7"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-3-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-3-1" hw=yes } else={ set [find interface="qsfp56-dd-3-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-3-3"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-3-3" hw=yes } else={ set [find interface="qsfp56-dd-3-3"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-3-5"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-3-5" hw=yes } else={ set [find interface="qsfp56-dd-3-5"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-3-7"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-3-7" hw=yes } else={ set [find interface="qsfp56-dd-3-7"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-4-1"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-4-1" hw=yes } else={ set [find interface="qsfp56-dd-4-1"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-4-3"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-4-3" hw=yes } else={ set [find interface="qsfp56-dd-4-3"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-4-5"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-4-5" hw=yes } else={ set [find interface="qsfp56-dd-4-5"] bridge="bridge" hw=yes disabled=no }
:if ([:len [find interface="qsfp56-dd-4-7"]] = 0) do={ add bridge="bridge" interface="qsfp56-dd-4-7" hw=yes } else={ set [find interface="qsfp56-dd-4-7"] bridge="bridge" hw=yes disabled=no }
/ip neighbor discovery-settings
# lldp added to the protocols already enabled (cdp and mndp stay as they are)
:if ([:typeof [:find [get protocol] "lldp"]] = "nil") do={ set protocol=([get protocol],"lldp") }
# qos: lossy - the switch's QoS and LLDP DCBX are left as they are.
