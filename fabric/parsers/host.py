"""Readers of a host's own state, all line-oriented (no TextFSM):

- ``sysfs_pcie``: ``grep -H .`` of ``/sys/class/net/<dev>/device/{current,max}_link_{speed,
  width}`` plus the collector's ``<...>/device/slot:<PCI address>`` line; one PcieLink per
  netdev. Empty output (a netdev with no PCI device, e.g. veth) is valid: no record.
- ``dmi_bios``: ``grep -H .`` of ``/sys/class/dmi/id/bios_{vendor,version,date}``.
- ``nmcli_connections``: ``nmcli -t -f NAME,UUID,TYPE,DEVICE connection show`` (terse: ``\\:``
  escapes a colon in a field); empty output is valid (no profiles).
- ``logind_conf``: ``systemd-analyze cat-config systemd/logind.conf`` (``# /path`` headers,
  ``[Section]``, ``Key=Value``; comments skipped); empty output is valid (nothing set).
- ``meminfo``: ``/proc/meminfo`` (at least MemTotal and MemAvailable).
- ``docker_images``: ``docker image inspect --format '{{.Id}} {{json .RepoTags}} {{json
  .Config.Env}}'`` of every local image, one line each; empty output is valid (no images).
"""

from __future__ import annotations

import json
import re

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import (
    BiosInfo,
    ConfSetting,
    ContainerImage,
    MemInfo,
    NmConnection,
    PcieLink,
    Record,
)

_PCIE_LINE = re.compile(
    r"^/sys/class/net/(?P<dev>[^/]+)/device/"
    r"(?P<attr>current_link_speed|current_link_width|max_link_speed|max_link_width|slot)"
    r":(?P<value>.*)$")
_SPEED = re.compile(r"^(\d+(?:\.\d+)?) GT/s(?: PCIe)?$")
_UNKNOWN = ("Unknown", "Unknown speed", "")


def _lines(raw: str) -> list[tuple[int, str]]:
    return [(n, ln.rstrip("\r")) for n, ln in enumerate(raw.splitlines(), start=1)
            if ln.strip()]


def _speed(kind: str, number: int, line: str, value: str) -> float | None:
    if value.strip() in _UNKNOWN:
        return None
    m = _SPEED.match(value.strip())
    if m is None:
        raise ParseError(kind, number, line, "not a PCIe link speed (e.g. '32.0 GT/s PCIe')")
    return float(m.group(1))


def _width(kind: str, number: int, line: str, value: str) -> int | None:
    v = value.strip()
    if v in _UNKNOWN or v == "255":  # 255: the kernel's "unknown" width
        return None
    if not v.isdigit():
        raise ParseError(kind, number, line, "not a PCIe link width (e.g. '4')")
    return int(v)


def read_sysfs_pcie(kind: str, raw: str) -> list[Record]:
    """One PcieLink per netdev, in the order the netdevs first appear."""
    found: dict[str, dict[str, float | int | str | None]] = {}
    for number, line in _lines(raw):
        m = _PCIE_LINE.match(line)
        if m is None:
            raise ParseError(kind, number, line, "not a sysfs PCIe link line")
        attr, value = m["attr"], m["value"]
        parsed: float | int | str | None
        if attr.endswith("speed"):
            parsed = _speed(kind, number, line, value)
        elif attr.endswith("width"):
            parsed = _width(kind, number, line, value)
        else:
            parsed = value.strip() or None
        found.setdefault(m["dev"], {})[attr] = parsed
    out: list[Record] = []
    for dev, a in found.items():
        cs, ms = a.get("current_link_speed"), a.get("max_link_speed")
        cw, mw, slot = a.get("current_link_width"), a.get("max_link_width"), a.get("slot")
        out.append(PcieLink(dev, float(cs) if isinstance(cs, int | float) else None,
                            cw if isinstance(cw, int) else None,
                            float(ms) if isinstance(ms, int | float) else None,
                            mw if isinstance(mw, int) else None,
                            slot if isinstance(slot, str) else None))
    return out


_DMI_LINE = re.compile(r"^/sys/class/dmi/id/bios_(?P<attr>vendor|version|date):(?P<value>.*)$")


def read_dmi_bios(kind: str, raw: str) -> list[Record]:
    """One BiosInfo; a line that is not a bios_* read is a ParseError."""
    attrs: dict[str, str] = {}
    for number, line in _lines(raw):
        m = _DMI_LINE.match(line)
        if m is None:
            raise ParseError(kind, number, line, "not a /sys/class/dmi/id/bios_* line")
        attrs[m["attr"]] = m["value"].strip()
    if not attrs:
        return []
    return [BiosInfo(attrs.get("vendor") or None, attrs.get("version") or None,
                     attrs.get("date") or None)]


def _terse_fields(line: str) -> list[str]:
    """nmcli's terse fields: split on ':' not escaped by a backslash, then unescape."""
    return [f.replace("\\:", ":").replace("\\\\", "\\")
            for f in re.split(r"(?<!\\):", line)]


def read_nmcli_connections(kind: str, raw: str) -> list[Record]:
    """One NmConnection per line (NAME:UUID:TYPE:DEVICE)."""
    out: list[Record] = []
    for number, line in _lines(raw):
        fields = _terse_fields(line)
        if len(fields) != 4 or not re.match(r"^[0-9a-fA-F-]{36}$", fields[1]):
            raise ParseError(kind, number, line, "not NAME:UUID:TYPE:DEVICE")
        name, uuid, ctype, device = fields
        out.append(NmConnection(name, uuid, ctype, device or None))
    return out


_HEADER = re.compile(r"^# (/\S+)$")
_SECTION = re.compile(r"^\[(\w[\w-]*)\]$")
_ASSIGN = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*=\s*(.*)$")


def read_logind_conf(kind: str, raw: str) -> list[Record]:
    """Every assignment in applying order; comment lines (# or ;) are skipped, except the
    ``# /path`` header naming the file that follows."""
    out: list[Record] = []
    file: str | None = None
    section: str | None = None
    for number, line in _lines(raw):
        s = line.strip()
        if h := _HEADER.match(s):
            file, section = h.group(1), None
            continue
        if s.startswith(("#", ";")):
            continue
        if sec := _SECTION.match(s):
            section = sec.group(1)
            continue
        a = _ASSIGN.match(s)
        if a is None:
            raise ParseError(kind, number, line, "not a [Section] or Key=Value line")
        out.append(ConfSetting(section, a.group(1), a.group(2).strip(), file))
    return out


_MEM = re.compile(r"^(\w+(?:\(\w+\))?):\s+(\d+)(?: kB)?$")


def read_meminfo(kind: str, raw: str) -> list[Record]:
    """One MemInfo; MemTotal or MemAvailable missing is a ParseError."""
    values: dict[str, int] = {}
    for number, line in _lines(raw):
        m = _MEM.match(line.strip())
        if m is None:
            raise ParseError(kind, number, line, "not a 'Key:   N kB' line")
        values[m.group(1)] = int(m.group(2))
    if not values:
        return []
    lacking = [k for k in ("MemTotal", "MemAvailable") if k not in values]
    if lacking:
        lines = raw.splitlines() or [""]
        raise ParseError(kind, len(lines), lines[-1], f"no {', '.join(lacking)}")
    return [MemInfo(values["MemTotal"], values["MemAvailable"])]


_IMAGE_ID = re.compile(r"^sha256:[0-9a-f]{64}$")


def read_docker_images(kind: str, raw: str) -> list[Record]:
    """One ContainerImage per line: the id, the tags (a JSON list, or null for none) and the
    environment (a JSON list of KEY=VALUE, or null), of which only NCCL_VERSION is kept."""
    out: list[Record] = []
    for number, line in _lines(raw):
        image_id, _, rest = line.partition(" ")
        tags_text, _, env_text = rest.partition(" ")
        if not _IMAGE_ID.match(image_id):
            raise ParseError(kind, number, line, "not an image id (sha256:<64 hex>)")
        try:
            tags, env = json.loads(tags_text or "x"), json.loads(env_text or "x")
        except ValueError:
            raise ParseError(kind, number, line,
                             "not '<id> <tags as JSON> <env as JSON>'") from None
        if not (tags is None or isinstance(tags, list)) or not (env is None or
                                                                isinstance(env, list)):
            raise ParseError(kind, number, line, "tags and env must be JSON lists (or null)")
        nccl = next((str(e).partition("=")[2] for e in env or []
                     if str(e).startswith("NCCL_VERSION=")), None)
        out.append(ContainerImage(image_id, tuple(str(t) for t in tags or []), nccl or None))
    return out


KINDS = (
    Kind("sysfs_pcie", "linux", read_sysfs_pcie, "sysfs device/{current,max}_link_{speed,width}",
         template=False, empty_ok=True),
    Kind("dmi_bios", "linux", read_dmi_bios, "sysfs dmi/id/bios_{vendor,version,date}",
         template=False),
    Kind("nmcli_connections", "linux", read_nmcli_connections,
         "nmcli -t -f NAME,UUID,TYPE,DEVICE connection show", template=False, empty_ok=True),
    Kind("logind_conf", "linux", read_logind_conf, "systemd-analyze cat-config "
         "systemd/logind.conf", template=False, empty_ok=True),
    Kind("meminfo", "linux", read_meminfo, "/proc/meminfo", template=False),
    Kind("docker_images", "linux", read_docker_images, "docker image inspect --format "
         "'{{.Id}} {{json .RepoTags}} {{json .Config.Env}}'", template=False, empty_ok=True),
)
