"""Errors that map onto the CLI's exit codes (see the contract in README)."""

from __future__ import annotations

from dataclasses import dataclass


class FabricError(Exception):
    """Base of every error the CLI turns into an exit code without a traceback."""

    exit_code = 3


@dataclass
class InputProblem:
    """One thing wrong with an input file: where it is and what is wrong."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f" [{self.field}]" if self.field else ""
        prefix = f"{where}{field}".strip()
        return f"{prefix}: {self.message}" if prefix else self.message


class InputError(FabricError):
    """Bad input or usage (exit 2). Carries every problem found, each with file, line and field."""

    exit_code = 2

    def __init__(self, problems: list[InputProblem] | InputProblem | str) -> None:
        if isinstance(problems, str):
            problems = [InputProblem(file="", line=None, field="", message=problems)]
        elif isinstance(problems, InputProblem):
            problems = [problems]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class RunIncomplete(FabricError):
    """The run could not complete (exit 3): some hosts were unreachable."""

    exit_code = 3


class ParseError(ValueError):
    """Tool output that cannot be parsed. Names the offending line (1-based)."""

    def __init__(self, kind: str, line_no: int, line: str, reason: str) -> None:
        self.kind = kind
        self.line_no = line_no
        self.line = line
        self.reason = reason
        super().__init__(f"{kind}: line {line_no}: {reason}: {line!r}")
