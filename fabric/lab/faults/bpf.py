"""The classic-BPF program of a `drop` fault, for `tc ... bpf bytecode ... da`.

The lab's kernel has no netem, gact or police: a random number against a threshold drops a
share of the frames (TC_ACT_SHOT) and lets the rest go on (TC_ACT_UNSPEC).
"""

from __future__ import annotations

#: TC_ACT_SHOT / TC_ACT_UNSPEC (-1: "no verdict", the frame goes on) for a direct-action filter.
TC_ACT_SHOT, TC_ACT_UNSPEC = 2, 0xFFFFFFFF
#: Classic BPF ancillary load of a random u32 (SKF_AD_OFF + SKF_AD_RANDOM).
SKF_AD_RANDOM = 0xFFFFF000 + 56


def drop_threshold(percent: float) -> int:
    """The random u32 below which a frame is dropped: `percent` % of 2**32, kept within
    1 .. 2**32 - 1 so that some frames drop and some pass."""
    return min(max(round(percent / 100 * 2**32), 1), 2**32 - 1)


def drop_bytecode(percent: float) -> str:
    """`tc ... bpf bytecode` dropping `percent` % of frames at random: A = random u32;
    A >= threshold ? pass : drop."""
    program = [(0x20, 0, 0, SKF_AD_RANDOM),  # ld [rand]
               (0x35, 0, 1, drop_threshold(percent)),  # jge #threshold, pass, drop
               (0x06, 0, 0, TC_ACT_UNSPEC),  # pass: ret #-1
               (0x06, 0, 0, TC_ACT_SHOT)]  # drop: ret #2
    return ",".join([str(len(program)), *(f"{c} {t} {f} {k}" for c, t, f, k in program)])
