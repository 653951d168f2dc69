"""Several scripts at once on one Spark, as one batch (`fabric.remote.batch`) in ONE exec
channel of the host's one SSH session.

Each script is a job of a parallel batch, named by the script, in its own subshell (in the
login environment where it asks). So the scripts run side by side on the host (the facts
batch, the ping burst, the bandwidth servers' start-up, the nccl-tests search) and the burst
takes as long as its slowest script, for one channel's round trips.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabric.remote.batch import JobOutput, exec_batch, split_batch
from fabric.remote.exec import LOGIN_ENV


@dataclass(frozen=True)
class Script:
    """One script of a burst: `login` runs it in the login environment (`LOGIN_ENV`);
    `timeout_s` counts from the start; `read` turns its output into its result
    (`ScriptOutput.value`) as soon as the burst is back, in the host's own task."""

    name: str
    text: str
    timeout_s: float
    login: bool = False
    read: Callable[[str], Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ScriptOutput:
    """What one script of a burst printed (stdout and stderr together), its exit status
    (None: its output never came back) and what its `read` made of it."""

    name: str
    rc: int | None
    output: str
    value: Any = None


def _jobs(scripts: Sequence[Script]) -> dict[str, str]:
    return {s.name: (LOGIN_ENV if s.login else "") + s.text for s in scripts}


def _outputs(scripts: Sequence[Script], jobs: Sequence[JobOutput]) -> list[ScriptOutput]:
    return [ScriptOutput(s.name, j.exit_code, j.text,
                         s.read(j.text) if s.read is not None else None)
            for s, j in zip(scripts, jobs, strict=True)]


def split_burst(scripts: Sequence[Script], output: str) -> list[ScriptOutput]:
    """Each script's output and exit status from the burst's output, in `scripts` order."""
    return _outputs(scripts, split_batch(output, [s.name for s in scripts]))


def exec_burst(connection: Any, scripts: Sequence[Script]) -> list[ScriptOutput]:
    """Run `scripts` side by side on the host, in one exec channel; their outputs in order.

    Raises `ScriptTimeout` (`fabric.remote.exec`) when the burst has not finished within the
    longest timeout.
    """
    if not scripts:
        return []
    timeout = max(s.timeout_s for s in scripts)
    return _outputs(scripts, exec_batch(connection, _jobs(scripts), timeout))
