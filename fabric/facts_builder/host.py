"""`HostFacts` from a Spark batch's host rows: PCIe links, BIOS, NetworkManager profiles,
logind's RemoveIPC, memory and container images. A row that was not in the batch leaves its
field None."""

from __future__ import annotations

from collections.abc import Sequence

from fabric.facts import HostFacts, ImageFact, PcieFact
from fabric.facts_builder.sections import SectionReader
from fabric.parsers.records import (
    BiosInfo,
    ConfSetting,
    ContainerImage,
    MemInfo,
    NmConnection,
    PcieLink,
)

#: systemd's compiled-in RemoveIPC when no file sets it (logind.conf(5)).
REMOVE_IPC_DEFAULT = True
_YES = ("1", "yes", "true", "on")
_NO = ("0", "no", "false", "off")


def build_host_state(rd: SectionReader, twins: Sequence[str]) -> HostFacts:
    """The host rows' facts (each twin's `pcie:<twin>` row, `dmi_bios`, `nmcli`, `logind`,
    `meminfo`, `docker_images`)."""
    pcie: dict[str, PcieFact] = {}
    for twin in twins:
        for link in rd.records(f"pcie:{twin}", PcieLink) or []:
            pcie[link.netdev] = PcieFact(link.netdev, link.current_speed_gts,
                                         link.current_width, link.max_speed_gts,
                                         link.max_width, link.slot)
    bios = next(iter(rd.records("dmi_bios", BiosInfo) or []), None)
    nm = rd.records("nmcli", NmConnection)
    remove_ipc, ipc_file = _remove_ipc(rd)
    mem = next(iter(rd.records("meminfo", MemInfo) or []), None)
    images = rd.records("docker_images", ContainerImage)
    return HostFacts(
        pcie=pcie,
        bios_version=bios.version if bios else None,
        bios_date=bios.date if bios else None,
        nm_profiles=None if nm is None else tuple((c.name, c.device) for c in nm),
        remove_ipc=remove_ipc,
        remove_ipc_file=ipc_file,
        mem_total_kib=mem.mem_total_kib if mem else None,
        mem_available_kib=mem.mem_available_kib if mem else None,
        images=None if images is None else tuple(ImageFact(i.image_id, i.tags, i.nccl)
                                                 for i in images),
    )


def _remove_ipc(rd: SectionReader) -> tuple[bool | None, str | None]:
    """logind's effective RemoveIPC: the last [Login] assignment systemd applies, else the
    default; (None, None) when the config was not read."""
    settings = rd.records("logind", ConfSetting)
    if settings is None:
        return None, None
    value, file = REMOVE_IPC_DEFAULT, None
    for s in settings:
        if s.key != "RemoveIPC" or s.section not in (None, "Login"):
            continue
        word = s.value.lower()
        if word in _YES or word in _NO:
            value, file = word in _YES, s.file
        else:
            rd.notes[f"logind: RemoveIPC={s.value} is no boolean (logind ignores it)"] = None
    return value, file
