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
still cannot read is skipped. Standard library only: it runs as a script, and imports only
what an interpreter has already loaded (`os`, `sys`) and `_md5`: each run costs an interpreter
start, as the real nmcli costs an exec (configparser, pathlib and uuid took about 20 ms more
CPU a run on the lab's machine, eight Sparks at once behind the first bandwidth round).
"""

from __future__ import annotations

import _md5  # type: ignore[import-not-found]  # hashlib would load OpenSSL (a few ms)
import os
import sys

DIRS = ("/etc/NetworkManager/system-connections", "/run/NetworkManager/system-connections")
FIELDS = ("NAME", "UUID", "TYPE", "DEVICE")
#: Keyfile `type=` -> the setting name nmcli prints.
TYPES = {"ethernet": "802-3-ethernet", "wifi": "802-11-wireless", "loopback": "loopback"}
#: RFC 4122's URL namespace (uuid.NAMESPACE_URL), as bytes.
NAMESPACE_URL = bytes.fromhex("6ba7b8119dad11d180b400c04fd430c8")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def uuid3(name: str) -> str:
    """`uuid.uuid3(uuid.NAMESPACE_URL, name)` as text: MD5 of the namespace and the name,
    version 3, RFC 4122 variant."""
    h = bytearray(_md5.md5(NAMESPACE_URL + name.encode()).digest())
    h[6] = (h[6] & 0x0F) | 0x30
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def connection_section(text: str) -> dict[str, str] | None:
    """The `[connection]` keys of a keyfile (lower-case, values stripped; the first of a
    repeated key), or None without that section. Keyfiles are GLib key files: `key=value`
    lines under `[group]` headers, `#` and `;` comments."""
    keys: dict[str, str] | None = None
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == "connection"
            if inside and keys is None:
                keys = {}
        elif inside and keys is not None and "=" in line:
            key, value = line.split("=", 1)
            keys.setdefault(key.strip().lower(), value.strip())
    return keys


def profile_line(path: str, netdevs: set[str]) -> str | None:
    """The terse NAME:UUID:TYPE:DEVICE line of one keyfile (None: unreadable or no
    `[connection]`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            c = connection_section(f.read())
    except OSError:
        return None
    if c is None:
        return None
    # a keyfile without uuid= (netplan writes none): NetworkManager derives one from its path
    name = c["id"] if "id" in c else os.path.basename(path).removesuffix(".nmconnection")
    uuid = c.get("uuid") or uuid3(path)
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
        try:  # a directory the user may not read (NetworkManager's are root's)
            names = sorted(n for n in os.listdir(d) if n.endswith(".nmconnection"))
        except OSError:
            names = []
        for name in names:
            line = profile_line(os.path.join(d, name), netdevs)
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
