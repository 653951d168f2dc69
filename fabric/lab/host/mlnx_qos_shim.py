"""`mlnx_qos` inside a lab Spark: NVIDIA's tool, emulated per netdev (state only).

A lab twin is a macvlan, not a ConnectX: the kernel has no DCB for it, so there is nothing for
the real `mlnx_qos` (mlnx-tools, DCB netlink) to talk to. `fabric lab up` of a lossless topology
puts this stand-in on each Spark's PATH (`/usr/local/bin/mlnx_qos`, the host's own overlay). It
takes the options push and the lab use - `-i IFACE`, `--trust pcp|dscp`, `--pfc LIST` (8 values
0/1), `--dscp2prio set|del,DSCP,PRIO` - with mlnx_qos's own checks and messages (a list that is
not 8 items, `--trust` together with `--dscp2prio`, a bad trust state), and answers with the
report mlnx_qos prints (OS-controlled DCBX, trust, the DSCP map where DSCP is trusted, PFC per
priority, the traffic classes), which the toolkit parses like the real one's.

What it keeps is per netdev, in the host's private /run (`STATE_DIR/<netdev>.json`), so it is
gone when the lab host is, like the NIC's runtime state at a reboot. It models the NIC's
link-level flow control too, as `ethtool -a`/`-A` show and set it (`ethtool_main`: the lab's
`ethtool` wrapper hands those two to it and everything else to the real ethtool): a ConnectX
starts with RX and TX pause on, and any PFC write, even back to all zeros, turns them off
(upstream mlx5 rewrites the whole PFCC register). It is honest about what it is not: no frame is
classified or paused (a veth has no priorities). Like the real tool it needs
root (DCB netlink): as a normal user it fails (exit 1, `Operation not permitted` on stderr), and
an interface the host does not have fails too. Standard library only: it runs as a script.
"""

from __future__ import annotations

import json
import optparse
import os
import sys
from pathlib import Path
from typing import Any

STATE_DIR = Path("/run/fabric-lab/mlnx_qos")
SYS_NET = Path("/sys/class/net")
#: ConnectX defaults: trust PCP, PFC off, DSCP d -> priority d >> 3, priority 0 -> tc1 and
#: priority 1 -> tc0 (the mlx5 default prio_tc map).
DEFAULT: dict[str, Any] = {"trust": "pcp", "pfc": [0] * 8,
                           "dscp2prio": {str(d): d >> 3 for d in range(64)},
                           "pause": {"autoneg": False, "rx": True, "tx": True}}
#: Where the real ethtool is (the wrapper on PATH is this stand-in's).
REAL_ETHTOOL = ("/usr/sbin/ethtool", "/sbin/ethtool")
PRIO_TC = [1, 0, 2, 3, 4, 5, 6, 7]


def _parser() -> optparse.OptionParser:
    p = optparse.OptionParser(usage="%prog -i <interface> [options]", version="%prog 1.2")
    p.add_option("-f", "--pfc", dest="pfc", metavar="LIST")
    p.add_option("--trust", dest="trust")
    p.add_option("--dscp2prio", dest="dscp2prio", action="append")
    p.add_option("-i", "--interface", dest="intf")
    p.add_option("-a", action="store_true", dest="printall", default=False)
    return p


def load(netdev: str) -> dict[str, Any]:
    path = STATE_DIR / f"{netdev}.json"
    if path.exists():
        data: dict[str, Any] = json.loads(path.read_text())
        data.setdefault("pause", dict(DEFAULT["pause"]))
        return data
    return json.loads(json.dumps(DEFAULT))  # type: ignore[no-any-return]


def save(netdev: str, state: dict[str, Any]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = STATE_DIR / f".{netdev}.json.tmp"
    tmp.write_text(json.dumps(state, sort_keys=True))
    os.replace(tmp, STATE_DIR / f"{netdev}.json")


def report(state: dict[str, Any]) -> str:
    """What `mlnx_qos -i IFACE` prints (OS-controlled DCBX, the layout of mlnx-tools)."""
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {state['trust']}"]
    if state["trust"] == "dscp":
        lines.append("dscp2prio mapping:")
        by_prio: dict[int, list[int]] = {p: [] for p in range(8)}
        for dscp, prio in state["dscp2prio"].items():
            by_prio[int(prio)].append(int(dscp))
        for prio in range(8):
            codes = "".join(f"{d:02d}," for d in sorted(by_prio[prio], reverse=True))
            while codes:
                lines.append(f"\tprio:{prio} dscp:{codes[:24]}")
                codes = codes[24:]
    lines += ["Cable len: 7", "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "".join(f"{bit}   " for bit in state["pfc"])]
    for tc in range(8):
        lines.append(f"tc: {tc} ratelimit: unlimited, tsa: vendor")
        lines += [f"\t priority:  {up}" for up in range(8) if PRIO_TC[up] == tc]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = _parser()
    options, args = parser.parse_args(argv)
    if args:
        print("Bad arguments")
        parser.print_usage()
        return 1
    if options.intf is None:
        print("Interface name is required")
        parser.print_usage()
        return 1
    if os.geteuid() != 0:  # DCB netlink needs CAP_NET_ADMIN (an error on stderr, exit 1)
        print("Netlink error: Operation not permitted", file=sys.stderr)
        return 1
    if not (SYS_NET / options.intf).exists():
        print(f"Netlink error: No such device ({options.intf})", file=sys.stderr)
        return 1
    state = load(options.intf)
    if options.pfc:
        items = options.pfc.split(",")
        if len(items) > 8:
            print("Too many items for PFC")
            return 1
        bits = []
        for item in items:
            if item not in ("0", "1"):
                print(f"Bad value for PFC: invalid literal for int() with base 10: {item!r}"
                      if not item.isdigit() else f"Bad value for PFC: {item} is not in the "
                      "range 0..1")
                parser.print_usage()
                return 1
            bits.append(int(item))
        if len(bits) != 8:
            print("pfc list must have 8 items")
            return 1
        state["pfc"] = bits
        # mlx5 writes the whole PFCC register: global pause goes off with any PFC write
        state["pause"] = {**state["pause"], "rx": False, "tx": False}
    if options.dscp2prio and options.trust:
        print("trust and dscp2prio commands cannot be used at the same time.")
        return 1
    for opt in options.dscp2prio or []:
        try:
            action, dscp, prio = opt.split(",")
            if action not in ("set", "del") or not 0 <= int(dscp) <= 63 or not 0 <= int(
                    prio) <= 7:
                raise ValueError(opt)
        except ValueError:
            print("Invalid dscp2prio command. Refer to the help.")
            return 1
        state["dscp2prio"][str(int(dscp))] = int(prio) if action == "set" else 0
    if options.trust:
        if options.trust not in ("dscp", "pcp"):
            print("Invalid trust state command. Refer to the help.")
            return 1
        state["trust"] = options.trust
    if options.pfc or options.trust or options.dscp2prio:
        save(options.intf, state)
    print(report(state))
    return 0


def pause_report(netdev: str, pause: dict[str, bool]) -> str:
    """What `ethtool -a NETDEV` prints."""
    on = {True: "on", False: "off"}
    return (f"Pause parameters for {netdev}:\nAutonegotiate:\t{on[pause['autoneg']]}\n"
            f"RX:\t\t{on[pause['rx']]}\nTX:\t\t{on[pause['tx']]}\n")


def ethtool_main(argv: list[str]) -> int:
    """`ethtool -a|--show-pause IFACE` and `ethtool -A|--pause IFACE [autoneg|rx|tx on|off]...`
    from the NIC state; any other use runs the real ethtool."""
    if len(argv) < 2 or argv[0] not in ("-a", "--show-pause", "-A", "--pause"):
        real = next((p for p in REAL_ETHTOOL if os.path.exists(p)), None)
        if real is None:
            print("ethtool: not installed", file=sys.stderr)
            return 127
        os.execv(real, [real, *argv])
    netdev = argv[1]
    if not (SYS_NET / netdev).exists():
        print(f"netlink error: no device matches name ({netdev})", file=sys.stderr)
        return 1
    state = load(netdev)
    if argv[0] in ("-a", "--show-pause"):
        print(pause_report(netdev, state["pause"]), end="")
        return 0
    words = argv[2:]
    if not words or len(words) % 2 or any(
            k not in ("autoneg", "rx", "tx") or v not in ("on", "off")
            for k, v in zip(words[::2], words[1::2], strict=True)):
        print("ethtool: bad command line argument(s)", file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("netlink error: Operation not permitted", file=sys.stderr)
        return 1
    state["pause"] = {**state["pause"], **{k: v == "on" for k, v in zip(
        words[::2], words[1::2], strict=True)}}
    save(netdev, state)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--as-ethtool"]:
        sys.exit(ethtool_main(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
