"""Faults injected into a lab, recorded in `faults.json` so `heal` undoes them newest first.

Each fault changes what the "hardware" reports (ip link, ethtool, lldpcli, the RouterOS API,
the kernel counters), the way a bad cable, a mis-set switch port or a mis-configured host would.
Two act over time rather than once: `flap` (a flapper process bounces the cable, see
`link` and `flapper`) and `drop` (a BPF filter loses a share of its frames, see `drop` and
`bpf`).

The modules: `targets` (what a TARGET names), `kernel` (reads and writes of a namespace),
`link`, `recable`, `address`, `services` and `drop` (the inject/undo pairs), `records` (the
typed undo records), `codec` and `state` (faults.json), `flapper` (the flapper process,
`python -m fabric.lab.faults flapper ...`), `bpf` (the drop program), `kinds` (the table).
"""

from __future__ import annotations

from fabric.lab.faults.address import WRONG_HOST
from fabric.lab.faults.bpf import SKF_AD_RANDOM, TC_ACT_SHOT, TC_ACT_UNSPEC, drop_bytecode
from fabric.lab.faults.codec import RecordError
from fabric.lab.faults.drop import DROP_PREF
from fabric.lab.faults.flapper import FLAP_DOWN_S, FLAP_PERIOD_S, FLAPPER, flap_forever, main
from fabric.lab.faults.kinds import KINDS, heal, inject
from fabric.lab.faults.link import DEGRADED_MBIT, TRAINING_CEILING_S
from fabric.lab.faults.records import Fault, UndoRecord
from fabric.lab.faults.state import active_faults
from fabric.lab.faults.targets import DIRECTIONS, DROP_PERCENT

__all__ = [
    "DEGRADED_MBIT", "DIRECTIONS", "DROP_PERCENT", "DROP_PREF", "FLAPPER", "FLAP_DOWN_S",
    "FLAP_PERIOD_S", "KINDS", "SKF_AD_RANDOM", "TC_ACT_SHOT", "TC_ACT_UNSPEC",
    "TRAINING_CEILING_S", "WRONG_HOST", "Fault", "RecordError", "UndoRecord",
    "active_faults", "drop_bytecode", "flap_forever", "heal", "inject", "main",
]
