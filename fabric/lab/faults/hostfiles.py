"""Faults in a Spark's own configuration, written into its private /etc (the lab host's
overlay, never the machine's): `nm-profile SPARK:TWIN` (NetworkManager's "Wired connection 1"
keyfile bound to the twin, as NetworkManager makes one for a cabled port) and `remove-ipc SPARK`
(a logind drop-in that sets RemoveIPC=yes after fabric's own, as an image or a hand edit
would) and `image-drift SPARK` (the vLLM engine image pulled again on that Spark alone: another
build under the same tag, with another NCCL, in the docker stand-in's image list). Undo puts
back what the file held before (or removes it)."""

from __future__ import annotations

import uuid as uuidlib
from pathlib import Path

from fabric.errors import InputError
from fabric.lab.faults.records import (
    Fault,
    HostFileUndo,
    ImageDriftUndo,
    NmProfileUndo,
    RemoveIpcUndo,
)
from fabric.lab.faults.targets import Ctx, lab_spark
from fabric.lab.host import docker_shim
from fabric.lab.host.hostenv import host_path

NM_DIR = "/etc/NetworkManager/system-connections"
NM_PROFILE = "Wired connection 1"
#: Sorted after fabric push's 40-fabric.conf: systemd applies it last, so it wins.
LOGIND_DROPIN = "/etc/systemd/logind.conf.d/90-lab-fault.conf"


def nm_keyfile(name: str, netdev: str, uuid: str) -> str:
    """The keyfile NetworkManager writes for an auto-created wired profile."""
    return (f"[connection]\nid={name}\nuuid={uuid}\ntype=ethernet\n"
            f"interface-name={netdev}\nautoconnect-priority=-999\n\n"
            "[ethernet]\n\n[ipv4]\nmethod=auto\n\n[ipv6]\naddr-gen-mode=stable-privacy\n"
            "method=auto\n\n[proxy]\n")


REMOVE_IPC = ("# a lab fault (fabric lab fault remove-ipc): logind's default brought back\n"
              "[Login]\nRemoveIPC=yes\n")


def _write(ctx: Ctx, host: str, path: str, text: str, mode: int) -> str | None:
    """Write `path` in the host's /etc; what it held before (None: absent)."""
    real = host_path(ctx.holder(host), path)
    previous = real.read_text() if real.exists() else None
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text(text)
    real.chmod(mode)
    return previous


def nm_profile(ctx: Ctx, target: str) -> Fault:
    """SPARK:TWIN gets NetworkManager's "Wired connection 1" profile bound to the twin."""
    host, _, netdev = target.partition(":")
    lab_spark(ctx, host, "nm-profile")
    twins = [t.netdev for port in ctx.intent.hosts[host].ports.values() for t in port]
    if netdev not in twins:
        raise InputError(f"nm-profile: give SPARK:TWIN, a fabric twin of {host} "
                         f"({', '.join(twins)}), not {target!r}")
    path = f"{NM_DIR}/{NM_PROFILE}.nmconnection"
    text = nm_keyfile(NM_PROFILE, netdev, str(uuidlib.uuid4()))
    previous = _write(ctx, host, path, text, 0o600)
    return Fault("nm-profile", target, f"{host}: NetworkManager profile \"{NM_PROFILE}\" on "
                 f"{netdev}", NmProfileUndo(host=host, path=path, previous=previous))


def remove_ipc(ctx: Ctx, target: str) -> Fault:
    """SPARK's logind gets RemoveIPC=yes (a drop-in applied after fabric's)."""
    lab_spark(ctx, target, "remove-ipc")
    previous = _write(ctx, target, LOGIND_DROPIN, REMOVE_IPC, 0o644)
    return Fault("remove-ipc", target, f"{target}: logind RemoveIPC=yes ({LOGIND_DROPIN})",
                 RemoveIpcUndo(host=target, path=LOGIND_DROPIN, previous=previous))


#: The image an `image-drift` re-pulls, and the NCCL of the other build under its tag.
DRIFT_TAG = "nvcr.io/nvidia/vllm:26.05.post1-py3"
DRIFT_NCCL = "2.27.7"


def image_drift(ctx: Ctx, target: str) -> Fault:
    """SPARK's vLLM image is another build under the same tag, with another NCCL."""
    lab_spark(ctx, target, "image-drift")
    real = host_path(ctx.holder(target), docker_shim.IMAGES_FILE)
    lines = real.read_text().splitlines() if real.exists() else []
    others = [ln for ln in lines if docker_shim.tag_of(ln) != DRIFT_TAG]
    text = "".join(f"{ln}\n" for ln in [*others,
                                          docker_shim.image_line(DRIFT_TAG, DRIFT_NCCL, "drift")])
    previous = _write(ctx, target, docker_shim.IMAGES_FILE, text, 0o644)
    return Fault("image-drift", target, f"{target}: {DRIFT_TAG} is another build (NCCL "
                 f"{DRIFT_NCCL})", ImageDriftUndo(host=target, path=docker_shim.IMAGES_FILE,
                                                  previous=previous))


def undo_file(ctx: Ctx, u: HostFileUndo) -> None:
    """Put the file back as it was (remove it where there was none)."""
    real: Path = host_path(ctx.holder(u.host), u.path)
    if u.previous is None:
        real.unlink(missing_ok=True)
    else:
        real.write_text(u.previous)
