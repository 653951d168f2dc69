"""What a host's netplan files already say: its renderer, and other definitions of our twins.

Netplan reads `/{lib,etc,run}/netplan/*.yaml` in lexical order of the file name (a file in
/run hides one of the same name in /etc, which hides one in /lib) and a later file overrides
the same keys of an earlier one. So a top-level `renderer:` in a later file changes the
renderer of the whole host; and two files that define the same device are merged (their
addresses add up).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

#: netplan's renderer when no file names one.
DEFAULT_RENDERER = "networkd"
#: Where netplan reads its files, lowest precedence first (a same-named file later wins).
SEARCH_DIRS = ("/lib/netplan", "/etc/netplan", "/run/netplan")
#: NetworkManager's own connection profiles (keyfiles), which can define the twins too.
NM_CONNECTIONS = "/etc/NetworkManager/system-connections"
_DEVICE_TYPES = ("ethernets", "bonds", "bridges", "vlans", "wifis", "modems", "tunnels",
                 "vrfs", "dummy-devices", "virtual-ethernets", "nm-devices")


@dataclass(frozen=True)
class ForeignDefinition:
    """A file other than ours that defines some of our twins (netplan YAML or an NM keyfile)."""

    path: str
    netdevs: tuple[str, ...]
    kind: str  # "netplan" | "networkmanager"
    #: It catches some twin by a name pattern or a MAC address, not by its name: push cannot
    #: take such a stanza over (it may catch other devices too).
    by_match: bool = False

    @property
    def adoptable(self) -> bool:
        """Push can take it over (back it up, then remove it): files under /etc only."""
        return self.path.startswith(("/etc/netplan/", NM_CONNECTIONS + "/"))

    def __str__(self) -> str:
        what = "netplan file" if self.kind == "netplan" else "NetworkManager connection"
        return f"{self.path} ({what}) defines {', '.join(self.netdevs)}"


def effective_files(files: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, content) in the order netplan reads them: by file name, /run > /etc > /lib."""
    chosen: dict[str, tuple[str, str]] = {}
    for directory in SEARCH_DIRS:
        for path, text in files.items():
            if posixpath.dirname(path) == directory and path.endswith(".yaml"):
                chosen[posixpath.basename(path)] = (path, text)
    return [chosen[name] for name in sorted(chosen)]


def _load(text: str) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    network = doc.get("network") if isinstance(doc, dict) else None
    return network if isinstance(network, dict) else {}


def host_renderer(files: Mapping[str, str], ignore: str) -> tuple[str, str | None]:
    """(the host's default renderer, the file that sets it; None: netplan's default), read
    from every netplan file but `ignore` (ours: it must never be the one that decides)."""
    renderer, source = DEFAULT_RENDERER, None
    for path, text in effective_files(files):
        if path == ignore:
            continue
        value = _load(text).get("renderer")
        if isinstance(value, str):
            renderer, source = value, path
    return renderer, source


def _caught(conf: Any, key: str, netdevs: set[str],
            macs: Mapping[str, str]) -> tuple[set[str], bool]:
    """(the twins one stanza defines, whether by a pattern or MAC rather than by name).
    netplan's `match:` needs every key it has to hold: `name` (a shell pattern) and
    `macaddress`; `driver` cannot be judged from here and is not."""
    match = conf.get("match") if isinstance(conf, dict) else None
    name = match.get("name") if isinstance(match, dict) else None
    mac = match.get("macaddress") if isinstance(match, dict) else None
    if not isinstance(name, str) and not isinstance(mac, str):
        found, by_match = {key} & netdevs, False
    else:
        found = {n for n in netdevs
                 if (not isinstance(name, str) or fnmatch.fnmatchcase(n, name))
                 and (not isinstance(mac, str) or macs.get(n) == mac.lower())}
        named_outright = isinstance(name, str) and name in found and not isinstance(mac, str)
        by_match = bool(found) and not named_outright
    if isinstance(conf, dict) and isinstance(conf.get("set-name"), str):
        found |= {conf["set-name"]} & netdevs
    return found, by_match


def _defined(network: dict[str, Any], netdevs: set[str],
             macs: Mapping[str, str]) -> tuple[set[str], bool]:
    found: set[str] = set()
    by_match = False
    for kind in _DEVICE_TYPES:
        section = network.get(kind)
        if not isinstance(section, dict):
            continue
        for key, conf in section.items():
            names, matched = _caught(conf, str(key), netdevs, macs)
            found |= names
            by_match |= matched
    return found, by_match


def _keyfile_defines(text: str, netdevs: set[str], macs: Mapping[str, str]) -> set[str]:
    """The twins a NetworkManager keyfile binds to, by `interface-name=` or `mac-address=`."""
    found: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key == "interface-name":
            found |= {value.strip()} & netdevs
        elif key == "mac-address":
            found |= {n for n in netdevs if macs.get(n) == value.strip().lower()}
    return found


def foreign_definitions(files: Mapping[str, str], ours: str, netdevs: Iterable[str],
                        nm_keyfiles: Mapping[str, str] = {},
                        macs: Mapping[str, str] = {}) -> list[ForeignDefinition]:
    """Every netplan file (but `ours`) and NM keyfile that defines one of `netdevs`, by name,
    by a name pattern or by MAC address (`macs`: each netdev's, lower case)."""
    wanted = set(netdevs)
    out: list[ForeignDefinition] = []
    for path, text in effective_files(files):
        if path == ours:
            continue
        hit, by_match = _defined(_load(text), wanted, macs)
        if hit:
            out.append(ForeignDefinition(path, tuple(sorted(hit)), "netplan", by_match))
    for path, text in sorted(nm_keyfiles.items()):
        hit = _keyfile_defines(text, wanted, macs)
        if hit:
            out.append(ForeignDefinition(path, tuple(sorted(hit)), "networkmanager"))
    return out
