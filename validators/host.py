"""host: a Spark's own state that breaks a fabric although every cable is right - each CX-7
function's PCIe link, NetworkManager profiles on fabric twins, logind's RemoveIPC, and the
memory nccl-tests needs and the engine images. `fabric doctor` runs this family alone."""

from __future__ import annotations

import re

from fabric.facts import NCCL_SIZES as SIZES
from fabric.facts import Facts, HostFacts, ImageFact, PcieFact, SparkFacts
from fabric.intent.model import Intent, InterfaceIntent
from validators.judge import Findings, fabric_netdevs, reference, where
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


#: A tag naming one of these is an engine's image (NGC's vllm, sglang and tensorrt-llm, the
#: community's spark-vllm-docker builds, lmsysorg/sglang).
ENGINE_IMAGE_WORDS = ("vllm", "sglang", "tensorrt-llm", "trtllm")
_NCCL_XYZ = re.compile(r"(\d+\.\d+\.\d+)")


def _xyz(version: str | None) -> str | None:
    """NCCL's x.y.z from a package version (2.28.9-1+cuda13.0) or a library's (2.28.9)."""
    m = _NCCL_XYZ.search(version or "")
    return m.group(1) if m else None


def _short(image_id: str) -> str:
    return image_id.removeprefix("sha256:")[:12]


@check("host.image")
def check_image(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges the engine images on the Sparks (docker, read without starting them): one tag
    is one image on every Spark that has it (ranks from two builds may not join one NCCL
    communicator), and the NCCL it declares is the hosts', which validate's nccl-tests
    proved (the engine runs the image's: host and container disagree)."""
    tags: dict[str, dict[str, ImageFact]] = {}
    sparks = list(out.sparks(intent))
    for host, sf in sparks:
        images = sf.host_state.images
        if images is None:
            out.skip(f"{host}: container images not read "
                     f"({_unread(sf, 'docker', 'docker_images')})", host=host)
            continue
        for image in images:
            for tag in image.tags:
                if any(word in tag.lower() for word in ENGINE_IMAGE_WORDS):
                    tags.setdefault(tag, {})[host] = image
    if not tags:
        out.skip("no engine image (vllm, sglang, tensorrt-llm) on any Spark",
                 expected="one image per tag")
    hosts_nccl = {h: _xyz(sf.versions.nccl) for h, sf in sparks}
    for tag, by_host in sorted(tags.items()):
        _judge_one_image(out, tag, by_host)
        _judge_image_nccl(out, tag, by_host, hosts_nccl)


def _judge_one_image(out: Findings, tag: str, by_host: dict[str, ImageFact]) -> None:
    ref = reference((h, i.image_id) for h, i in by_host.items())
    ref_image = next(i for i in by_host.values() if i.image_id == ref)
    odd = {h: i for h, i in by_host.items() if i.image_id != ref}
    for host, image in sorted(odd.items()):
        out.fail(f"{host}: {tag} is image {_short(image.image_id)} (NCCL {image.nccl or '?'});"
                 f" the other Sparks' is {_short(ref)} (NCCL {ref_image.nccl or '?'})",
                 host=host, expected=_short(ref), actual=_short(image.image_id),
                 hint=f"run one image on every node: `docker pull {tag}` on {host}, or "
                 f"`docker save` it on a node with {_short(ref)} and `docker load` it there")
    if not odd:
        out.ok(f"{tag}: one image ({_short(ref)}) on {len(by_host)} Spark(s)",
               expected="one image per tag", actual=_short(ref))


def _judge_image_nccl(out: Findings, tag: str, by_host: dict[str, ImageFact],
                      hosts_nccl: dict[str, str | None]) -> None:
    for image_id in sorted({i.image_id for i in by_host.values()}):
        hosts = sorted(h for h, i in by_host.items() if i.image_id == image_id)
        image = by_host[hosts[0]]
        mine = _xyz(image.nccl)
        known = {h: hosts_nccl[h] for h in hosts if hosts_nccl.get(h)}
        if mine is None or not known:
            what = ("declares no NCCL_VERSION" if mine is None else
                    "is on Sparks that report no NCCL of their own")
            out.skip(f"{tag} ({_short(image_id)}) {what}: its NCCL is not compared with the "
                     "hosts'", host=hosts[0], expected="the hosts' NCCL")
            continue
        hosts_ref = reference(sorted(known.items()))  # an odd host is version's to name
        if hosts_ref != mine:
            out.warn(f"{tag} ({_short(image_id)}, on {', '.join(hosts)}) carries NCCL {mine};"
                     f" the hosts run NCCL {hosts_ref}: validate's nccl-tests proved the hosts' "
                     "NCCL, the engine runs the image's",
                     host=hosts[0], expected=mine, actual=hosts_ref,
                     hint=f"prove the engine's NCCL: run nccl-tests inside {tag} across the "
                     f"nodes, or install NCCL {mine} on the hosts so validate proves what the "
                     "engine runs")
        else:
            out.ok(f"{tag} carries NCCL {mine}, as the hosts do", expected=mine, actual=mine)
