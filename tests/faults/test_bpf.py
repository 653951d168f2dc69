"""The drop fault's classic-BPF program, as `tc ... bpf bytecode` takes it."""

from __future__ import annotations

import pytest

from fabric.lab.faults import drop_bytecode
from fabric.lab.faults.bpf import SKF_AD_RANDOM, TC_ACT_SHOT, TC_ACT_UNSPEC, drop_threshold


def test_the_program_for_five_percent() -> None:
    # ld [rand] (0xfffff038); jge #214748365 (5 % of 2**32), pass, drop; ret #-1; ret #2
    assert drop_bytecode(5) == "4,32 0 0 4294963256,53 0 1 214748365,6 0 0 4294967295,6 0 0 2"


def test_the_program_for_twenty_percent() -> None:
    assert drop_bytecode(20.0) == ("4,32 0 0 4294963256,53 0 1 858993459,6 0 0 4294967295,"
                                   "6 0 0 2")


def test_the_constants_are_the_kernels() -> None:
    assert SKF_AD_RANDOM == 0xFFFFF038  # SKF_AD_OFF (-0x1000) + SKF_AD_RANDOM (56)
    assert (TC_ACT_SHOT, TC_ACT_UNSPEC) == (2, 2**32 - 1)


@pytest.mark.parametrize(("percent", "threshold"), [
    (50, 2**31),
    (100, 2**32 - 1),  # everything but a random 0xffffffff drops
    (1e-12, 1),  # a share too small for a u32 still drops some
    (10, 429496730),
])
def test_threshold(percent: float, threshold: int) -> None:
    assert drop_threshold(percent) == threshold
    assert drop_bytecode(percent).split(",")[2] == f"53 0 1 {threshold}"


def test_every_instruction_has_four_fields() -> None:
    count, *insns = drop_bytecode(33.3).split(",")
    assert int(count) == len(insns) == 4
    assert all(len(i.split()) == 4 for i in insns)
