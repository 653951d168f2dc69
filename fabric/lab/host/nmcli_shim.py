"""`nmcli` inside a lab Spark: NetworkManager's profiles as keyfiles, listed (no daemon).

DGX OS runs NetworkManager (the lab's /etc/netplan holds its 01-network-manager-all.yaml), and
`fabric lab up` puts this stand-in on each Spark's PATH (`/usr/local/bin/nmcli`). It answers
what the toolkit asks: `nmcli -t -f NAME,UUID,TYPE,DEVICE connection show` lists every keyfile
in /etc/NetworkManager/system-connections and /run/NetworkManager/system-connections (where
netplan's NetworkManager renderer writes `netplan-<dev>.nmconnection`) in nmcli's terse form;
a profile is shown active on its `interface-name` when that netdev exists and the profile does
not say `autoconnect=false` (NetworkManager would bring it up there). `nmcli connection
reload` succeeds (there is nothing to reload). Anything else fails as nmcli does on a bad
argument (exit 2). The daemon reads the keyfiles as root and shows every user all of them, so
the wrapper runs the stand-in through `sudo -n` for a normal user where that works; what it
still cannot read is skipped. Standard library only: it runs as a script.
"""

from __future__ import annotations

import configparser
import os
import sys
import uuid as uuidlib
from pathlib import Path

DIRS = ("/etc/NetworkManager/system-connections", "/run/NetworkManager/system-connections")
FIELDS = ("NAME", "UUID", "TYPE", "DEVICE")
#: Keyfile `type=` -> the setting name nmcli prints.
TYPES = {"ethernet": "802-3-ethernet", "wifi": "802-11-wireless", "loopback": "loopback"}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def profile_line(path: Path, netdevs: set[str]) -> str | None:
    """The terse NAME:UUID:TYPE:DEVICE line of one keyfile (None: unreadable or no id)."""
    conf = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        conf.read_string(path.read_text())
    except (OSError, configparser.Error):
        return None
    if not conf.has_section("connection"):
        return None
    c = conf["connection"]
    # a keyfile without uuid= (netplan writes none): NetworkManager derives one from its path
    name = c.get("id", path.stem)
    uuid = c.get("uuid") or str(uuidlib.uuid3(uuidlib.NAMESPACE_URL, str(path)))
    kind = TYPES.get(c.get("type", ""), c.get("type", ""))
    dev = c.get("interface-name", "")
    active = dev in netdevs and c.get("autoconnect", "true").lower() not in ("false", "0", "no")
    return ":".join(_escape(v) for v in (name, uuid, kind, dev if active else ""))


def show(dirs: tuple[str, ...] = DIRS, sysfs: str = "/sys/class/net") -> list[str]:
    """Every readable keyfile's line, by directory then file name."""
    try:
        netdevs = set(os.listdir(sysfs))
    except OSError:
        netdevs = set()
    out = []
    for d in dirs:
        try:
            paths = sorted(Path(d).glob("*.nmconnection")) if Path(d).is_dir() else []
        except OSError:  # a directory the user may not read (NetworkManager's are root's)
            paths = []
        for path in paths:
            line = profile_line(path, netdevs)
            if line is not None:
                out.append(line)
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if a not in ("-t", "--terse")]
    if args[:2] == ["-f", ",".join(FIELDS)]:
        args = args[2:]
    if args in (["connection", "show"], ["con", "show"], ["c", "show"]):
        print("\n".join(show()))
        return 0
    if args in (["connection", "reload"], ["con", "reload"], ["c", "reload"]):
        return 0
    print(f"Error: the lab's nmcli stand-in does not take: {' '.join(argv)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
