"""version: kernel, NIC driver and firmware, NCCL, CUDA driver and toolkit, BIOS equal on every
Spark."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent
from validators.judge import Findings, reference
from validators.registry import check, needs

FIELDS = {"kernel": "kernel", "nic_driver": "NIC driver", "nic_firmware": "NIC firmware",
          "nccl": "NCCL", "cuda_driver": "CUDA driver", "cuda": "CUDA toolkit", "bios": "BIOS"}


#: What version judges: each Spark's kernel, firmware, driver, NCCL and CUDA versions.
NEEDS = needs("version", spark=True)


@check("version.consistent")
def check_consistent(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each version (kernel, NIC driver/firmware, NCCL, CUDA driver, BIOS) equal on all
    Sparks, naming the odd one out against the most common value."""
    hosts = list(out.sparks(intent))
    for key, label in FIELDS.items():
        values = [(h, getattr(sf.versions, key)) for h, sf in hosts]
        known = [(h, v) for h, v in values if v is not None]
        if not known:
            out.skip(f"no Spark reported its {label} version", expected="equal")
            continue
        ref = reference(known)
        odd = [(h, v) for h, v in known if v != ref]
        for host, value in odd:
            out.fail(f"{host} runs {label} {value}; the other Sparks run {ref}", host=host,
                     expected=ref, actual=value,
                     hint=f"install {label} {ref} on {host} (mismatched NCCL/driver/firmware "
                     "between nodes breaks or slows collectives)")
        for host, value in values:
            if value is None:
                out.warn(f"{host} did not report its {label} version", host=host,
                         expected=ref, actual=None,
                         hint=f"check that the {label} is installed on {host}")
        if not odd:
            out.ok(f"{label} {ref} on all {len(known)} Sparks", expected="equal", actual=ref)
