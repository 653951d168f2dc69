"""``/interface/ethernet/switch`` and its ``qos`` menus (Marvell Prestera switch chips).

What the MikroTik manual "Quality of Service" and its CLI reference describe for the CRS804's
98DX7335: QoS profiles, the DSCP map (``qos/map/ip``), per-port trust and PFC
(``qos/port``), the default tx-manager's queues (schedule, weight, ECN), PFC profiles
(``qos/priority-flow-control``), the QoS settings (7.23+: ``lossless-traffic-class``) and
``qos-hw-offloading`` on the switch chip.

Every item is **emulated state**: the kernel of the lab has no QoS, so nothing here changes a
netdev or a frame. Menus follow the version the switch reports (``platform.QOS_*_SINCE``): a
menu the version lacks is answered like RouterOS answers an unknown path (``no such command
prefix``). Which properties a menu's rows have, and so which arguments its commands take,
and how each value is read (its type), come from the property table by chip family and
version (fabric/intent/platforms.yaml ``routeros_properties``, see ``qos_common``): a property
this chip or version lacks is not printed, and setting it is refused with ``unknown
parameter``, as RouterOS refuses any argument a menu does not have. The chip family is the
state's ``chip_family``.

Not modelled: the manual says new-generation chips keep ``qos-hw-offloading=yes`` whatever is
asked; here it reads back what was set. Error texts the manual and field reports do not give
(a profile in use, a built-in one) are the emulator's own wording.
"""

from __future__ import annotations

from ..platform import QOS_MARKING_SINCE, QOS_SINCE
from . import qos_port, qos_queue, qos_switch
from .base import Menu
from .qos_common import SWITCH, listing

MENUS = (
    Menu(SWITCH, listing(SWITCH, qos_switch.switch_rows, set=qos_switch.switch_set)),
    Menu(qos_switch.PROFILE, listing(qos_switch.PROFILE, qos_switch.profile_rows,
                                     add=qos_switch.profile_add, set=qos_switch.profile_set,
                                     remove=qos_switch.profile_remove), QOS_MARKING_SINCE),
    Menu(qos_switch.MAP, listing(qos_switch.MAP, qos_switch.map_rows), QOS_MARKING_SINCE),
    Menu(qos_switch.MAP_IP, listing(qos_switch.MAP_IP, qos_switch.map_ip_rows,
                                    add=qos_switch.map_ip_add, set=qos_switch.map_ip_set,
                                    remove=qos_switch.map_ip_remove), QOS_MARKING_SINCE),
    Menu(qos_port.PORT, listing(qos_port.PORT, qos_port.port_rows, set=qos_port.qos_port_set,
                                unset=qos_port.qos_port_unset), QOS_MARKING_SINCE),
    Menu(qos_queue.TX_MANAGER, listing(qos_queue.TX_MANAGER, qos_queue.tx_manager_rows),
         QOS_SINCE),
    Menu(qos_queue.QUEUE, listing(qos_queue.QUEUE, qos_queue.queue_rows,
                                  set=qos_queue.queue_set), QOS_SINCE),
    Menu(qos_queue.PFC, listing(qos_queue.PFC, qos_queue.pfc_rows, add=qos_queue.pfc_add,
                                set=qos_queue.pfc_set, remove=qos_queue.pfc_remove), QOS_SINCE),
    Menu(qos_port.SETTINGS, listing(qos_port.SETTINGS, qos_port.settings_rows,
                                    set=qos_port.settings_set), QOS_SINCE),
)
