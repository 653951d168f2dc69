"""Shared bits for the collection tests: recorded facts, their sections, the intents."""

from __future__ import annotations

from pathlib import Path

from fabric.facts_builder import Section
from fabric.intent.build import load_intent
from fabric.intent.model import Intent
from fabric.remote.batch import MARK, split_batch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
TWINS = ["enp1s0f0np0", "enP2p1s0f0np0", "enp1s0f1np1", "enP2p1s0f1np1"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def sections_of(transcript: str) -> dict[str, Section]:
    """Every section of a recorded facts transcript, by name (whatever batch it answered)."""
    names = [line.split()[2] for line in transcript.splitlines()
             if line.startswith(f"{MARK} begin ")]
    return {j.name: Section(j.name, j.text.rstrip("\n"), j.exit_code)
            for j in split_batch(transcript, names) if j.exit_code is not None}


def star4() -> Intent:
    return load_intent("star4", None)


def ring4() -> Intent:
    return load_intent("ring4", None)
