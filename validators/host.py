"""host: a Spark's own state that breaks a fabric although every cable is right - each CX-7
function's PCIe link, NetworkManager profiles on fabric twins, logind's RemoveIPC, and the
memory nccl-tests needs. `fabric doctor` runs this family alone."""

from __future__ import annotations

import re

from fabric.facts import NCCL_SIZES as SIZES
from fabric.facts import Facts, HostFacts, PcieFact, SparkFacts
from fabric.intent.model import Intent, InterfaceIntent
from validators.judge import Findings, fabric_netdevs, where
from validators.registry import check, needs

#: What host judges: rows of each Spark's facts batch (sysfs, DMI, nmcli, logind, meminfo).
NEEDS = needs("host", spark=True)

_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def _gen(speed: float | None) -> str:
    gen = _GEN.get(speed or 0.0)
    return f"Gen{gen}" if gen else f"{speed} GT/s"


def _unread(sf: SparkFacts, tool: str, row: str) -> str:
    """Why a row's fact is absent: the tool missing, or the note about the row."""
    if tool in sf.missing:
        return f"{tool} is not available on {sf.host}"
    note = next((n for n in sf.notes if n.startswith(row)), None)
    return note or f"{row} was not read"


def _bios(hs: HostFacts) -> str:
    if hs.bios_version is None:
        return "BIOS version unknown"
    return f"BIOS {hs.bios_version}" + (f" of {hs.bios_date}" if hs.bios_date else "")


@check("host.pcie")
def check_pcie(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each cabled twin's PCIe function: trained at the profile's speed and width
    (Gen5 x4 on a GB10), or, where the profile names none, at the function's own maximum; a
    narrower link caps RDMA whatever the cable says."""
    prof = intent.profile
    for intended, sf in out.twins(intent):
        host, link = intended.host, intended.link_id
        fact = sf.host_state.pcie.get(intended.netdev)
        if fact is None:
            why = (f"profile {prof.name}: a lab twin has none" if prof.pcie_width is None
                   else _unread(sf, "sysfs", f"pcie:{intended.netdev}"))
            out.skip(f"{where(intended)}: no PCIe function read ({why})", host=host, link=link)
            continue
        speed = prof.pcie_speed_gts or fact.max_speed_gts
        width = prof.pcie_width or fact.max_width
        if speed is None or width is None:
            out.skip(f"{where(intended)}: its function reports no maximum link and profile "
                     f"{prof.name} names none", host=host, link=link)
            continue
        _judge_pcie(out, intended, sf, fact, speed, width)


def _judge_pcie(out: Findings, intended: InterfaceIntent, sf: SparkFacts, fact: PcieFact,
                speed: float, width: int) -> None:
    host, link = intended.host, intended.link_id
    want, got = f"{_gen(speed)} x{width}", f"{_gen(fact.speed_gts)} x{fact.width}"
    slot = f" (PCI {fact.slot})" if fact.slot else ""
    if (fact.speed_gts or 0) >= speed and (fact.width or 0) >= width:
        out.ok(f"{where(intended)}{slot}: PCIe {got}", host=host, link=link,
               expected=want, actual=got)
    elif (fact.width or 0) < width:
        out.fail(f"{where(intended)}{slot}: PCIe {got}, expected {want}: the function "
                 f"carries at most {(fact.width or 0) * speed * 0.985:.0f} Gb/s of RDMA",
                 host=host, link=link, expected=want, actual=got,
                 hint=f"{_gen(fact.speed_gts)} x{fact.width}: BIOS before 2026-04 (and "
                 f"some GB10 machines, e.g. ASUS GX10) wires the second CX-7 at x2; "
                 f"update the BIOS ({_bios(sf.host_state)}) and power-cycle")
    else:
        out.fail(f"{where(intended)}{slot}: PCIe {got}, expected {want}: trained below "
                 f"its speed", host=host, link=link, expected=want, actual=got,
                 hint="a link that trains down is a degraded init: shut down, drain "
                 "power fully (unplug 30 s), boot; then update the BIOS "
                 f"({_bios(sf.host_state)}) if it recurs")


def _managed(name: str, netdev: str) -> bool:
    """The profile netplan renders for NetworkManager (`netplan-<dev>`, `netplan-<dev>-…`)."""
    return name == f"netplan-{netdev}" or name.startswith(f"netplan-{netdev}-")


@check("host.nm")
def check_nm(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges NetworkManager profiles active on fabric twins: only netplan's own
    (`netplan-<twin>`); another ("Wired connection N") fights netplan and announces mDNS."""
    for host, sf in out.sparks(intent):
        profiles = sf.host_state.nm_profiles
        if profiles is None:
            if "nmcli" in sf.missing:
                out.ok(f"{host}: no NetworkManager (nmcli absent): nothing fights netplan",
                       host=host, expected=[], actual=None)
            else:
                out.skip(f"{host}: NetworkManager profiles not read "
                         f"({_unread(sf, 'nmcli', 'nmcli')})", host=host)
            continue
        twins = fabric_netdevs(intent, host)
        foreign = [(n, d) for n, d in profiles if d in twins and not _managed(n, d)]
        if not foreign:
            out.ok(f"{host}: no foreign NetworkManager profile on a fabric twin", host=host,
                   expected=[], actual=[])
            continue
        for name, dev in foreign:
            out.fail(f"{host}: NetworkManager profile \"{name}\" is active on fabric twin "
                     f"{dev}: it fights netplan's addressing and announces mDNS on the fabric",
                     host=host, link=_link(intent, host, dev), expected=[], actual=name,
                     hint=f"sudo nmcli connection delete \"{name}\"; keep NetworkManager from "
                     "making new ones: no-auto-default=* under [main] in "
                     "/etc/NetworkManager/NetworkManager.conf, then fabric push --apply")


def _link(intent: Intent, host: str, netdev: str | None) -> str | None:
    return next((i.link_id for i in intent.interfaces(host) if i.netdev == netdev), None)


@check("host.ipc")
def check_ipc(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges logind's RemoveIPC on each Spark (every Spark runs an engine rank): yes, the
    default, deletes vLLM's semaphores when a login ends and the head hangs."""
    for host, sf in out.sparks(intent):
        hs = sf.host_state
        if hs.remove_ipc is None:
            out.skip(f"{host}: logind's configuration not read "
                     f"({_unread(sf, 'logind.conf', 'logind')})", host=host)
        elif hs.remove_ipc:
            source = hs.remove_ipc_file or "systemd's default (nothing sets it)"
            out.fail(f"{host}: logind RemoveIPC=yes ({source}): a logout deletes the engine's "
                     "semaphores and shared memory; the vLLM head hangs forever", host=host,
                     expected="no", actual="yes",
                     hint="set RemoveIPC=no in /etc/systemd/logind.conf (fabric push writes "
                     "/etc/systemd/logind.conf.d/40-fabric.conf) and restart systemd-logind")
        else:
            out.ok(f"{host}: logind RemoveIPC=no ({hs.remove_ipc_file})", host=host,
                   expected="no", actual="no")


_SIZE = re.compile(r"-e\s+(\d+)([KMG])")
_UNIT = {"K": 2**10, "M": 2**20, "G": 2**30}


def nccl_buffer_bytes(sizes: str = SIZES) -> int:
    """What nccl-tests allocates at its largest size (`-e`): a send and a receive buffer."""
    m = _SIZE.search(sizes)
    if m is None:
        raise ValueError(f"no -e size in {sizes!r}")
    return 2 * int(m.group(1)) * _UNIT[m.group(2)]


@check("host.memory")
def check_memory(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each Spark's available memory against nccl-tests' largest buffers plus the
    profile's headroom: unified memory, so a buffer that does not fit kills the node (only
    where the profile judges nccl-tests: not in the lab)."""
    if intent.profile.nccl_busbw_min_gbytes is None:
        out.skip(f"profile {intent.profile.name} runs no nccl-tests on GPU memory (its "
                 "hosts' memory is not a Spark's unified memory)")
        return
    buffers = nccl_buffer_bytes()
    headroom = int(intent.profile.memory_headroom_gib * 2**30)
    need = f"{(buffers + headroom) / 2**30:.0f} GiB"
    for host, sf in out.sparks(intent):
        avail = sf.host_state.mem_available_kib
        if avail is None:
            out.skip(f"{host}: memory not read ({_unread(sf, 'meminfo', 'meminfo')})",
                     host=host)
            continue
        have = avail * 1024
        text = f"{host}: {have / 2**30:.1f} GiB available"
        kw = {"host": host, "expected": f">= {need}", "actual": f"{have / 2**30:.1f} GiB"}
        hint = ("stop what holds the memory (a running engine, a container: docker ps; "
                "nvidia-smi) before validate's nccl-tests, or run validate --only without nccl")
        if have < buffers:
            out.fail(f"{text}, nccl-tests needs {buffers / 2**30:.0f} GiB for its buffers "
                     f"({SIZES}): the node runs out of memory", hint=hint, **kw)
        elif have < buffers + headroom:
            out.warn(f"{text}: nccl-tests' {buffers / 2**30:.0f} GiB leave less than "
                     f"{intent.profile.memory_headroom_gib:g} GiB", hint=hint, **kw)
        else:
            out.ok(f"{text}, nccl-tests needs {need} with headroom", **kw)
