"""The RouterOS console language, enough for an admin and for Netmiko: one line may hold several
commands separated by ``;``; paths are written ``/ip address`` or ``/ip/address``; items are
named by name, ``*id``, print number or ``[ find <conditions> ]``; ``print`` takes ``where``.

Every command runs through the same menu handlers as the API, so a change made on the console
reaches the kernel and makes a lane train exactly as the same change over the API does. The
language's words (commands, tokens, conditions) are read in ``cli_lex``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .cli_lex import CliError, conditions, find, split_commands, tokens
from .device import Device
from .errors import Trap, no_such_item
from .export import export_terse, resource_text
from .kernel import KernelError
from .menus import MENUS, available
from .menus.base import Request, Row
from .state import State

#: Directories that hold menus (``/ip``, ``/interface/bridge``, ...), for error messages.
DIRECTORIES = {
    "/".join(path.split("/")[:i]) for path in MENUS for i in range(2, path.count("/") + 2)
}
PRINT_FLAGS = ("terse", "detail", "brief", "without-paging", "count-only", "stats", "as-value")
COMMAND_FLAGS = ("once", "without-paging")


@dataclass(frozen=True)
class View:
    """How ``print`` shows a menu: flag letters (from boolean properties) and table columns."""

    flags: tuple[tuple[str, str], ...]
    columns: tuple[str, ...]


VIEWS: dict[str, View] = {
    "/interface": View(
        (("D", "dynamic"), ("X", "disabled"), ("R", "running"), ("S", "slave")),
        ("name", "type", "actual-mtu", "l2mtu", "max-l2mtu", "mac-address"),
    ),
    "/interface/ethernet": View(
        (("X", "disabled"), ("R", "running")),
        ("name", "mtu", "mac-address", "arp", "speed", "auto-negotiation"),
    ),
    "/interface/bridge": View(
        (("X", "disabled"), ("R", "running")),
        ("name", "mtu", "actual-mtu", "l2mtu", "arp", "mac-address", "protocol-mode"),
    ),
    "/interface/bridge/port": View(
        (("X", "disabled"), ("I", "inactive"), ("H", "hw-offload")),
        ("interface", "bridge", "hw", "pvid", "priority", "path-cost", "horizon"),
    ),
    "/ip/address": View(
        (("X", "disabled"), ("I", "invalid"), ("D", "dynamic")),
        ("address", "network", "interface"),
    ),
    "/ip/neighbor": View((), ("interface", "address", "mac-address", "identity", "platform",
                              "age")),
    "/ip/route": View(
        (("D", "dynamic"), ("A", "active"), ("c", "connect")),
        ("dst-address", "gateway", "routing-table", "distance"),
    ),
    "/system/health": View((), ("name", "value", "type")),
    "/system/package": View((("X", "disabled"),), ("name", "version", "build-time", "size")),
    "/user": View((("X", "disabled"),), ("name", "group", "address", "last-logged-in")),
    "/user/active": View((), ("when", "name", "address", "via")),
}
#: ``print stats`` as a table (other menus show their counters one block per item).
STATS_VIEWS: dict[str, View] = {
    "/interface": View(
        VIEWS["/interface"].flags,
        ("name", "rx-byte", "tx-byte", "rx-packet", "tx-packet", "rx-drop", "tx-drop",
         "tx-queue-drop", "rx-error", "tx-error"),
    ),
}  # fmt: skip
#: Menus whose ``print stats`` shows one ``attribute: value`` block per item.
STATS_BLOCKS = ("/interface/ethernet",)
FLAG_NAMES = {key: key.upper() for view in VIEWS.values() for _, key in view.flags}


# --- parsing -----------------------------------------------------------------------------------


@dataclass
class Command:
    path: str
    verb: str
    args: dict[str, str] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)  # names, *ids, numbers, [find ...]
    where: list[str] | None = None


def _bad_name(line: str, word: str) -> CliError:
    column = line.find(word) + 1 if word else 1
    return CliError(f"bad command name {word} (line 1 column {column})")


def parse(command: str, line: str) -> Command:
    """One command (no ``;``): its menu, verb, items, arguments and ``where`` conditions."""
    toks = tokens(command)
    words: list[str] = []
    used = 0
    for tok in toks:
        if "=" in tok or tok.startswith("["):
            break
        words.extend(w for w in tok.split("/") if w)
        used += 1
    found: tuple[int, str] | None = None
    for k in range(len(words) - 1, -1, -1):
        path = "/" + "/".join(words[:k])
        if path in MENUS and words[k] in MENUS[path].commands:
            found = (k, path)
            break
    if found is None:
        for i in range(len(words)):
            if "/" + "/".join(words[: i + 1]) not in DIRECTORIES | set(MENUS):
                raise _bad_name(line, words[i])
        raise _bad_name(line, words[-1] if words else "")
    k, path = found
    cmd = Command(path=path, verb=words[k])
    rest = words[k + 1 :] + toks[used:]
    for i, tok in enumerate(rest):
        if tok == "where" and cmd.verb == "print":
            cmd.where = rest[i + 1 :]
            break
        if tok.startswith("["):
            cmd.items.append(tok)
        elif "=" in tok:
            key, _, value = tok.partition("=")
            cmd.args[key] = value
        elif tok in (PRINT_FLAGS if cmd.verb == "print" else COMMAND_FLAGS):
            cmd.args[tok] = ""
        else:
            cmd.items.extend(part for part in tok.split(",") if part)
    return cmd


# --- running -----------------------------------------------------------------------------------


class Cli:
    """Runs console lines against a device; ``execute`` returns the text to show."""

    def __init__(self, device: Device) -> None:
        self.device = device
        #: per menu, the ids the last ``print`` numbered 0, 1, ... (RouterOS numbers items as
        #: it prints them; without a print, the whole list in order)
        self.numbered: dict[str, list[str]] = {}

    def execute(self, line: str) -> str | None:
        """Output of one line (None: ``/quit``). Nothing runs if any command fails to parse;
        the first failing command stops the rest, as on RouterOS."""
        words = [w for w in line.strip().lstrip("/").replace("/", " ").split()
                 if w != "without-paging"]  # fmt: skip
        if words in (["quit"], ["exit"]):
            return None
        special = self._special(words)
        if special is not None:
            return special(self.device.load())
        try:
            commands = [parse(c, line.strip()) for c in split_commands(line)]
        except CliError as exc:
            return str(exc)
        out: list[str] = []
        for cmd in commands:
            try:
                text = self.run(cmd)
            except (Trap, CliError) as exc:
                out.append(exc.message if isinstance(exc, Trap) else str(exc))
                break
            except KernelError as exc:
                out.append(f"failure: {exc}")
                break
            if text:
                out.append(text)
        return "\n".join(out)

    @staticmethod
    def _special(words: list[str]) -> Callable[[State], str] | None:
        return {
            ("export",): export_terse,
            ("export", "terse"): export_terse,
            ("system", "identity", "print"): lambda s: f"  name: {s.identity}",
            ("system", "resource", "print"): resource_text,
        }.get(tuple(words))

    def rows(self, path: str) -> list[Row]:
        handler = MENUS[path].commands["print"]
        return handler(self.device, Request(path=path, command="print")).rows

    def resolve(self, path: str, items: list[str]) -> list[str]:
        """Item words -> API references (``*id`` or name)."""
        refs: list[str] = []
        for item in items:
            if item.startswith("["):
                refs += [r[".id"] for r in self.rows(path) if find(item)(r)]
            elif item.isdigit():
                ids = self.numbered.get(path) or [r[".id"] for r in self.rows(path)]
                if int(item) >= len(ids):
                    raise no_such_item()
                refs.append(ids[int(item)])
            else:
                refs.append(item)
        return refs

    def run(self, cmd: Command) -> str:
        if not available(MENUS[cmd.path], self.device.load().version):
            raise CliError(f"bad command name {cmd.path.rsplit('/', 1)[-1]} (line 1 column 1)")
        if cmd.verb == "print":
            return self.print(cmd)
        args = dict(cmd.args)
        if cmd.items:
            refs = self.resolve(cmd.path, cmd.items)
            if not refs:
                return ""  # [ find ... ] matched nothing: RouterOS does nothing
            args["numbers"] = ",".join(refs)
        handler = MENUS[cmd.path].commands[cmd.verb]
        reply = handler(self.device, Request(path=cmd.path, command=cmd.verb, args=args))
        if cmd.verb == "monitor":
            return "\n\n".join(_settings(row) for row in reply.rows)
        return ""

    def print(self, cmd: Command) -> str:
        stats = "stats" in cmd.args
        args = {k: v for k, v in cmd.args.items() if k not in PRINT_FLAGS or k == "stats"}
        handler = MENUS[cmd.path].commands["print"]
        rows = handler(self.device, Request(path=cmd.path, command="print", args=args)).rows
        if cmd.where is not None:
            rows = [r for r in rows if conditions(cmd.where)(r)]
        if "count-only" in cmd.args:
            return str(len(rows))
        if stats and cmd.path in STATS_BLOCKS:
            return "\n\n".join(_settings({k: v for k, v in r.items() if k != ".id"})
                                for r in rows)
        if rows and ".id" not in rows[0]:
            return "\n".join(_settings(r) for r in rows)
        self.numbered[cmd.path] = [r[".id"] for r in rows]
        numbered = list(enumerate(rows))
        view = VIEWS.get(cmd.path, View((), ()))
        if stats and cmd.path in STATS_VIEWS:
            view = STATS_VIEWS[cmd.path]
        if "detail" in cmd.args or "terse" in cmd.args or not view.columns:
            return "\n".join(_terse(i, r, view) for i, r in numbered)
        return _table(numbered, view)


# --- output ------------------------------------------------------------------------------------


def _cli_value(value: str) -> str:
    return {"true": "yes", "false": "no"}.get(value, value)


#: RouterOS prints a date-time (``last-link-up-time``) as it is, space and all.
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def _quote(value: str) -> str:
    if value and all(ch.isalnum() or ch in "-_.,:/*+" for ch in value):
        return value
    if _DATE_TIME.match(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _settings(row: Row) -> str:
    width = max((len(k) for k in row), default=0) + 2
    return "\n".join(f"{k:>{width}}: {_cli_value(v)}" for k, v in row.items())


def _flags(row: Row, view: View) -> str:
    return "".join(letter for letter, key in view.flags if row.get(key) == "true")


def _terse(index: int, row: Row, view: View) -> str:
    skip = {".id", "comment", *(key for _, key in view.flags)}
    pairs = " ".join(f"{k}={_quote(_cli_value(v))}" for k, v in row.items() if k not in skip)
    comment = f"comment={_quote(row['comment'])} " if "comment" in row else ""
    return f"{index:>2} {_flags(row, view):<3} {comment}{pairs}".rstrip()


def _table(numbered: list[tuple[int, Row]], view: View) -> str:
    lines = []
    if view.flags:
        lines.append("Flags: " + "; ".join(f"{f} - {FLAG_NAMES[k]}" for f, k in view.flags))
    lines.append("Columns: " + ", ".join(c.upper() for c in view.columns))
    flag_width = max([len(view.flags)] + [len(_flags(r, view)) for _, r in numbered])
    cells = [[_cli_value(r.get(c, "")) for c in view.columns] for _, r in numbered]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(view.columns)]
    head = f"{'#':>2} {'':<{flag_width}} " + "  ".join(
        c.upper().ljust(w) for c, w in zip(view.columns, widths, strict=True))
    lines.append(head.rstrip())
    for (index, row), values in zip(numbered, cells, strict=True):
        if "comment" in row:
            lines.append(f";;; {row['comment']}")
        body = "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))
        lines.append(f"{index:>2} {_flags(row, view):<{flag_width}} {body}".rstrip())
    return "\n".join(lines)
