"""Split a batched transcript into one `Section` per command (see `spark_commands`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabric.collect.spark_commands import END, MARK

_LINE = re.compile(rf"^{re.escape(MARK)} (?P<name>[^\s@]+)(?: rc=(?P<rc>\d+))?@@@\s*$")


@dataclass(frozen=True)
class Section:
    """What one command printed (stdout and stderr together) and its exit code."""

    name: str
    output: str
    rc: int


class TranscriptError(ValueError):
    """The transcript is cut short or out of order (the session broke mid-batch)."""


def split_transcript(text: str) -> dict[str, Section]:
    """Sections by name. Anything before the first marker (the echoed command) is ignored.

    A section that opened but never closed, or an end marker that never opened, raises
    TranscriptError naming it; the closing END section must be there. Trailing empty lines
    are not part of a section's output.
    """
    sections: dict[str, Section] = {}
    current: str | None = None
    body: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = _LINE.match(line)
        if match is None:
            if current is not None:
                body.append(line)
            continue
        name, rc = match["name"], match["rc"]
        if rc is None:
            if current is not None:
                raise TranscriptError(f"section {current} never ended (next: {name})")
            current, body = name, []
        else:
            if current != name:
                raise TranscriptError(f"section {name} ended but {current} was open")
            while body and body[-1] == "":  # the batch's newline before the end marker
                body.pop()
            sections[name] = Section(name, "\n".join(body), int(rc))
            current = None
    if current is not None:
        raise TranscriptError(f"transcript ends inside section {current}")
    if END not in sections:
        raise TranscriptError("transcript has no end marker (the batch did not finish)")
    del sections[END]
    return sections
