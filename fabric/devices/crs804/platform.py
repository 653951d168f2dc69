"""What a MikroTik CRS804-4DDQ-hRM is to the toolkit beyond its port layout, as data: its model
name (its lanes, port modes and QoS version gates are platforms.yaml data in the intent, which
names lanes before any device is read) and the RouterOS menus push and the fact collection
read and change."""

from __future__ import annotations

#: The model's key in platforms.yaml.
MODEL = "crs804-4ddq-hrm"

SWITCH = "/interface/ethernet/switch"
QOS = f"{SWITCH}/qos"
PROFILE, MAP_IP, QUEUE = f"{QOS}/profile", f"{QOS}/map/ip", f"{QOS}/tx-manager/queue"
PFC, PORT, SETTINGS = f"{QOS}/priority-flow-control", f"{QOS}/port", f"{QOS}/settings"
DISCOVERY = "/ip/neighbor/discovery-settings"
#: Every RouterOS menu the lossless profile reads and may change (snapshotted before a push).
QOS_PATHS = (SWITCH, PROFILE, MAP_IP, QUEUE, PFC, PORT, SETTINGS)
#: RouterOS menus a push touches; their rows are snapshotted before any change.
SWITCH_PATHS = ("/interface/ethernet", "/interface/bridge", "/interface/bridge/port",
                DISCOVERY)
#: The prefix of the fabric lanes' names (any other bridge port may carry the management).
FABRIC_LANE = "qsfp"

