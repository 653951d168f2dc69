"""What a host's netplan files already say: its renderer, and other definitions of our twins.

Netplan reads `/{lib,etc,run}/netplan/*.yaml` in lexical order of the file name (a file in
/run hides one of the same name in /etc, which hides one in /lib) and a later file overrides
the same keys of an earlier one. So a top-level `renderer:` in a later file changes the
renderer of the whole host; and two files that define the same device are merged (their
addresses add up).
"""

from __future__ import annotations

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


def _defined(network: dict[str, Any], netdevs: set[str]) -> set[str]:
    found: set[str] = set()
    for kind in _DEVICE_TYPES:
        section = network.get(kind)
        if not isinstance(section, dict):
            continue
        for key, conf in section.items():
            names = {str(key)}
            if isinstance(conf, dict):
                match = conf.get("match")
                if isinstance(match, dict) and isinstance(match.get("name"), str):
                    names = {match["name"]}
                if isinstance(conf.get("set-name"), str):
                    names.add(conf["set-name"])
            found |= names & netdevs
    return found


def foreign_definitions(files: Mapping[str, str], ours: str, netdevs: Iterable[str],
                        nm_keyfiles: Mapping[str, str] = {}) -> list[ForeignDefinition]:
    """Every netplan file (but `ours`) and NM keyfile that defines one of `netdevs`."""
    wanted = set(netdevs)
    out: list[ForeignDefinition] = []
    for path, text in effective_files(files):
        if path == ours:
            continue
        hit = _defined(_load(text), wanted)
        if hit:
            out.append(ForeignDefinition(path, tuple(sorted(hit)), "netplan"))
    for path, text in sorted(nm_keyfiles.items()):
        hit = {line.split("=", 1)[1].strip() for line in text.splitlines()
               if line.strip().startswith("interface-name=")} & wanted
        if hit:
            out.append(ForeignDefinition(path, tuple(sorted(hit)), "networkmanager"))
    return out
