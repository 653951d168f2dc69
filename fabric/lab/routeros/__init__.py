"""RouterOS v7 emulator: the management plane of the lab's CRS804 switch namespace.

How the lab starts it (one process per lab, inside the switch namespace)::

    # 1. before the namespace's lanes are cabled, write the state once:
    from fabric.lab.routeros import write_initial_state
    write_initial_state("/run/fabric/L/crs804.json", identity="crs804",
                        lanes={"qsfp56-dd-1-1": 200, "qsfp56-dd-2-1": 200},  # cable Gbit/s
                        username="admin", password="secret",
                        config="factory",  # or "prepared"; default "no-defaults"
                        mgmt_address="198.18.0.2/24",  # the /ip/address item (emulated only)
                        chip_family="prestera-dx")  # or "prestera-cpss" (QoS properties)
    # 2. create the cabled lanes as netdevs named like the lanes (veth ends) in L-crs804,
    # 3. start the API server in the namespace and wait for its readiness line:
    ip netns exec L-crs804 python -m fabric.lab.routeros serve \\
        --state /run/fabric/L/crs804.json --listen 198.18.0.2:8728 \\
        [--line-rate-mbit 10000] [--training-s 5.0] [--ready-file /run/fabric/L/crs804.ready]

Readiness: once listening, the server prints exactly one line ``READY <host>:<port>`` to stdout
(flushed) and, with ``--ready-file``, atomically writes ``<host>:<port>`` to that file. Read
stdout line by line (or poll for the file) - no sleeps. ``--listen HOST:0`` picks a free port,
which the READY line reports. SIGTERM stops it cleanly.

At start-up it makes the kernel match the state: lane MTU and admin state, the tbf shaping of
lanes that negotiate below their cable, bridges and bridge ports (never ether1: the management
port is a bridge port only in the emulated view). Start-up does not train.

Counters: ``/interface`` rows (``link-downs``, ``rx-byte`` ... ``tx-queue-drop``) and
``/interface/ethernet print stats`` are the lane netdevs' kernel counters, read on every request
like link, MTU and admin state: ``ip -s -s -j link`` (stats64), sysfs ``carrier_down_count`` and
the root qdisc's drops (``tc -s qdisc``). Only attributes with a kernel source are printed (see
``counters``); an uncabled lane prints them all as 0.

Link training: a change of speed, FEC or auto-negotiation, or re-enabling a lane, holds the
lane at ``no-link`` (its netdev down, so the far end loses carrier) for ``--training-s``
seconds; a thread of the server brings it up at the deadline recorded in the state file, also
for changes made through the SSH CLI.

LLDP and link times (``observed``): the server's own LLDP receiver (an AF_PACKET socket for
0x88cc on every interface of the namespace) keeps ``/ip/neighbor`` like RouterOS: entries keyed
by (the interface a frame arrived on, chassis id, port id), each aged from its last frame until
its TTL runs out (a TTL-0 frame removes its entry at once). A re-plug leaves the old entry to
age out. A link watcher (rtnetlink) records each interface name's carrier up/down times for
``/interface`` ``last-link-up-time`` / ``last-link-down-time``, in the clock ``/system/clock``
prints. The
namespace's lldpd only announces the switch. The socket is also the kernel's handler for
LLDP, so bridged lanes no longer count it as ``rx-drop``. The server writes what it observed
to ``<state stem>.observed.json`` next to the state file, where the SSH CLI reads it.

The API (``session``, ``streams``) is as strict as RouterOS for an independent client: tags on
every reply (also to a sentence that did not parse), bytes passed through as they are, position
numbers in ``=numbers=``, ``=category=`` on traps, the 6.43+ login only, and ``listen``,
``print =follow=`` / ``=interval=`` and ``monitor`` streaming until ``/cancel``.

SSH CLI (for Netmiko's ``mikrotik_routeros``): make sshd's ``ForceCommand``::

    python -m fabric.lab.routeros shell --state /run/fabric/L/crs804.json

It reads the same state file and runs commands through the same menus as the API, so
``/export terse`` shows what the API configured and a console ``set`` trains a lane too.
"""

from __future__ import annotations

from .state import write_initial_state

__all__ = ["write_initial_state"]
