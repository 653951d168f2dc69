"""`pcie-width SPARK:pN`: the second CX-7 function of port pN (twin B, `enP2p…`) trained at
Gen5 x2 of its x4, as a BIOS before 2026-04 wires it.

A lab twin is a macvlan: `/sys/class/net/<twin>/device` does not exist. In the Spark's own
mount namespace (its holder's; sshd and every login share it) the twin's sysfs directory gets
an overlay (writes land in the lab host's directory) holding a `device/` with the four link
files the facts batch reads (`current_link_{speed,width}`, `max_link_{speed,width}`); every
other attribute still reads live through the overlay. Undo unmounts it."""

from __future__ import annotations

import shutil

from fabric.errors import InputError
from fabric.lab import ns
from fabric.lab.faults.records import Fault, PcieWidthUndo
from fabric.lab.faults.targets import Ctx

#: What the faulted function's sysfs says: Gen5, x2 of x4.
LINK_FILES = {"current_link_speed": "32.0 GT/s PCIe", "current_link_width": "2",
              "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "4"}


def _in_host(ctx: Ctx, host: str, script: str) -> str:
    return ns.run(["nsenter", "-t", str(ctx.holder(host)), "-m", "sh", "-c", script])


def pcie_width(ctx: Ctx, target: str) -> Fault:
    """SPARK:pN's twin B shows a Gen5 x2 PCIe link (of x4)."""
    host, _, port = target.partition(":")
    spec = ctx.intent.hosts.get(host)
    if spec is None or spec.role != "spark" or port not in spec.ports \
            or host not in ctx.info.namespaces:
        ports = ", ".join(spec.ports) if spec is not None else "a Spark's ports"
        raise InputError(f"pcie-width: give SPARK:PORT ({ports}), not {target!r}")
    netdev = spec.ports[port][-1].netdev
    work = ctx.info.dir / "hosts" / host / f"pcie.{netdev}"
    (work / "up").mkdir(parents=True, exist_ok=True)
    (work / "work").mkdir(exist_ok=True)
    files = "; ".join(f"echo '{v}' > \"$d/device/{k}\"" for k, v in LINK_FILES.items())
    _in_host(ctx, host, f"set -e; d=$(readlink -f /sys/class/net/{netdev}); "
                        f"mount -t overlay -o lowerdir=$d,upperdir={work}/up,workdir={work}/work"
                        f" fabric-pcie $d; mkdir -p \"$d/device\"; {files}")
    return Fault("pcie-width", target, f"{host} {netdev}: PCIe Gen5 x2 of x4",
                 PcieWidthUndo(host=host, netdev=netdev, work=str(work)))


def undo_pcie_width(ctx: Ctx, u: PcieWidthUndo) -> None:
    _in_host(ctx, u.host, f"umount \"$(readlink -f /sys/class/net/{u.netdev})\"")
    shutil.rmtree(u.work, ignore_errors=True)
