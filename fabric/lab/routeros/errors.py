"""Errors a command can raise; the session turns them into ``!trap`` / ``!fatal`` replies."""

from __future__ import annotations

# RouterOS trap categories (API manual): 0 missing item or command, 1 argument value failure,
# 2 execution interrupted, 3 scripting failure, 4 general failure, 5 API failure, 6 TTY
# failure, 7 a value from :return. MikroTik's own examples: `=category=0 =message=no such item`,
# `=category=2 =message=interrupted` for a cancelled command; `no such command prefix` and
# `unknown parameter` come without one.
CATEGORY_MISSING = 0
CATEGORY_ARGUMENT = 1
CATEGORY_INTERRUPTED = 2
CATEGORY_GENERAL = 4


class Trap(Exception):
    """A command failed: ``!trap`` [``=category=N``] ``=message=...``, then ``!done``."""

    def __init__(self, message: str, category: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.category = category


class Fatal(Exception):
    """The session must end: reply ``!fatal <reason>`` and close the connection."""


def no_such_item() -> Trap:
    return Trap("no such item", CATEGORY_MISSING)


def no_such_command() -> Trap:
    return Trap("no such command", CATEGORY_MISSING)


def interrupted() -> Trap:
    """What ends a streaming command that ``/cancel`` stopped."""
    return Trap("interrupted", CATEGORY_INTERRUPTED)


def unknown_parameter() -> Trap:
    return Trap("unknown parameter")


def no_match(prop: str) -> Trap:
    return Trap(f"input does not match any value of {prop}", CATEGORY_ARGUMENT)


def ambiguous(prop: str) -> Trap:
    return Trap(
        f"ambiguous value of {prop}, more than one possible value matches input",
        CATEGORY_ARGUMENT,
    )


def out_of_range(prop: str, low: int, high: int) -> Trap:
    return Trap(f"value of {prop} out of range ({low}..{high})", CATEGORY_ARGUMENT)
