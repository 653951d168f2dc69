"""Proof that the ring's NCCL is subnet-aware, kept on the launch side of the state directory.

On a DAC ring no subnet spans all nodes: stock NCCL creates queue pairs to GIDs it cannot reach
and times out, so multi-node tensor parallel needs a subnet-aware NCCL, which logs "Subnet-aware
routing". The proof is such a line, taken from an nccl-tests log (`fabric launch proof-nccl
LOG`) or from a `fabric launch rehearse --backend nccl` run, recorded for the current intent in
`nccl-proof.json` (per lab `labs/<lab>/nccl-proof.json`) next to the launch record.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from fabric.errors import InputError
from fabric.intent.model import Intent
from fabric.statedir import state_dir

SCHEMA = "fabric.nccl-proof/1"
PROOF_NAME = "nccl-proof.json"
MARKER = "Subnet-aware routing"


@dataclass(frozen=True)
class NcclProof:
    """Where the "Subnet-aware routing" line came from, for which intent, and the line."""

    topology: str
    intent_hash: str
    source: str
    sha256: str
    line: str
    recorded: str
    schema: str = SCHEMA


def proof_path(lab: str | None = None) -> Path:
    root = state_dir()
    return (root / "labs" / lab / PROOF_NAME) if lab else root / PROOF_NAME


def marker_line(text: str) -> str | None:
    """The first line of `text` that says NCCL routes subnet-aware, if any."""
    return next((line.strip() for line in text.splitlines() if MARKER in line), None)


def record_proof(text: str, source: str, intent: Intent, lab: str | None) -> NcclProof:
    """Record `text` (a log) as the proof for `intent`; InputError when it has no marker."""
    line = marker_line(text)
    if line is None:
        raise InputError(f"{source}: no {MARKER!r} line: this NCCL is not subnet-aware (or "
                         "NCCL_DEBUG=INFO was not set for the run)")
    proof = NcclProof(topology=intent.name, intent_hash=intent.intent_hash, source=source,
                      sha256=hashlib.sha256(text.encode()).hexdigest(), line=line[:300],
                      recorded=datetime.now(UTC).isoformat())
    path = proof_path(lab)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(proof), indent=2) + "\n")
    os.replace(tmp, path)
    return proof


def load_proof(lab: str | None = None) -> NcclProof | None:
    """The recorded proof, None when there is none; InputError when the file is corrupt."""
    path = proof_path(lab)
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} record")
        return NcclProof(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"{path}: unreadable NCCL proof: {exc}") from None


def ring_tp_refusal(intent: Intent, engine: str, tp: int, lab: str | None) -> str | None:
    """Why this launch may not start, or None: multi-node tensor parallel (SGLang, vLLM with
    TP > 1) on a ring needs a recorded proof of a subnet-aware NCCL for the current intent."""
    if intent.kind != "ring" or engine == "dp" or tp <= 1:
        return None
    proof = load_proof(lab)
    if proof is not None and proof.intent_hash == intent.intent_hash:
        return None
    where = proof_path(lab)
    why = ("no proof recorded" if proof is None else
           f"the proof in {where} was recorded for intent {proof.intent_hash}, not "
           f"{intent.intent_hash}")
    return (f"multi-node tensor parallel (TP{tp}) on the ring {intent.name} needs a subnet-aware "
            f"NCCL (stock NCCL times out creating queue pairs to unreachable GIDs) and {why}. "
            "Remedy: install a subnet-aware NCCL on every node, then record its proof: run "
            "nccl-tests with NCCL_DEBUG=INFO and `fabric launch proof-nccl LOG`, or `fabric "
            "launch rehearse --backend nccl` (it records the proof when NCCL logs "
            f"{MARKER!r}); or launch data parallel (`fabric launch dp`); --force overrides, "
            "logged")
