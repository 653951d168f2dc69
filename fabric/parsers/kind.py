"""What a parser kind is: a name, a platform, a reader, and whether empty output is valid."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fabric.parsers.records import Record

Reader = Callable[[str, str], list[Record]]  # (kind, raw) -> records


@dataclass(frozen=True)
class Kind:
    """One parseable tool output.

    ``empty_ok``: a valid output can hold no records (e.g. no LLDP neighbors); otherwise an
    output that yields nothing is a ParseError. ``template``: the kind uses a TextFSM template
    listed in ``templates/index``.
    """

    name: str
    platform: str  # "linux" or "mikrotik_routeros"
    reader: Reader
    summary: str
    template: bool = True
    empty_ok: bool = False
