"""One API connection: login, sentence parsing, dispatch to menus, reply sentences.

As strict as RouterOS for an independent client: a reply to a tagged sentence carries its tag
even when the sentence did not parse; words are bytes, and a value that is not UTF-8 comes back
byte for byte; ``=numbers=`` takes position numbers (of this session's last print of the menu,
or of the whole menu before any) besides ids and names; the missing-command and missing-item
traps carry ``=category=0``; only the 6.43+ login (``=name=`` and ``=password=``) is accepted.
``listen``, ``print =follow=`` / ``=interval=`` and ``monitor`` without ``once`` stream until
``/cancel`` (see ``streams``), while the session serves other sentences.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import socket
import threading
from dataclasses import dataclass, field, replace

from fabric.intent.platforms import version_tuple

from .codec import ConnectionClosed, ProtocolError, WordReader, decode_word, encode_sentence
from .device import Device
from .errors import Fatal, Trap, interrupted, no_such_command, no_such_item
from .kernel import KernelError
from .menus import MENUS, available, directories
from .menus.base import Menu, Reply, Request, Row, check_args, proplist
from .streams import Streams, follow, parse_time, repeat

log = logging.getLogger(__name__)

LOGIN_FAILED = "invalid user name or password (6)"
EMPTY_REPLY_SINCE = (7, 18)
#: ``monitor`` without ``once`` sends its rows again this often unless ``=interval=`` says.
MONITOR_INTERVAL_S = 1.0
#: Arguments that make a ``print`` stream.
PRINT_STREAMING = ("follow", "follow-only", "interval")

DIRECTORIES = directories()


@dataclass
class Sentence:
    """A request sentence split into its kinds of words."""

    command: str
    args: dict[str, str] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    tag: str | None = None


def sentence_tag(words: list[bytes]) -> str | None:
    """The ``.tag`` of a sentence, found before anything else is parsed."""
    found = None
    for word in words[1:]:
        if word.startswith(b".tag="):
            found = decode_word(word[len(b".tag="):])
    return found


def parse_sentence(words: list[bytes]) -> Sentence:
    text = [decode_word(w) for w in words]
    sentence = Sentence(command=text[0], tag=sentence_tag(words))
    for word in text[1:]:
        if word.startswith("="):
            name, _, value = word[1:].partition("=")
            sentence.args[name] = value
        elif word.startswith("?"):
            sentence.queries.append(word[1:])
        elif not word.startswith(".tag="):
            raise Trap("unknown parameter")
    return sentence


class Session:
    """Serves one client socket until it quits, breaks the protocol or disconnects."""

    def __init__(self, sock: socket.socket, device: Device) -> None:
        self.sock = sock
        self.device = device
        self.reader = WordReader(sock.recv)
        self.user: str | None = None
        self._active: str | None = None  # this session's /user/active entry
        self._send_lock = threading.Lock()
        self.streams = Streams(self.send)
        #: per menu, the items of this session's last print, in order (position numbers)
        self.numbered: dict[str, list[str]] = {}

    def send(self, kind: str, attrs: Row | None = None, tag: str | None = None) -> None:
        words = [kind, *(f"={k}={v}" for k, v in (attrs or {}).items())]
        if tag is not None:
            words.append(f".tag={tag}")
        data = encode_sentence(words)
        with self._send_lock:
            self.sock.sendall(data)

    def fatal(self, reason: str) -> None:
        with contextlib.suppress(OSError), self._send_lock:
            self.sock.sendall(encode_sentence(["!fatal", reason]))

    def run(self) -> None:
        try:
            while True:
                words = self.reader.read_sentence()
                self.handle(words)
        except ConnectionClosed:
            return
        except (ProtocolError, Fatal) as exc:
            self.streams.stop_all()
            self.fatal(str(exc))
        except OSError:
            return
        finally:
            self.streams.stop_all()
            if self._active is not None:
                self.device.active_users.logout(self._active)

    def handle(self, words: list[bytes]) -> None:
        tag = sentence_tag(words)
        if self.user is None and words[0] != b"/login":
            raise Fatal("not logged in")
        try:
            sentence = parse_sentence(words)
            if sentence.command == "/cancel":
                self.cancel(sentence)
                return
            reply = self.dispatch(sentence)
        except Trap as exc:
            self.trap(exc, tag)
            return
        except KernelError as exc:
            self.trap(Trap(f"failure: {exc}"), tag)
            return
        if reply is None:  # a stream: it answers for itself
            return
        for row in reply.rows:
            self.send("!re", row, tag)
        if reply.is_print and not reply.rows and self.empty_reply():
            self.send("!empty", None, tag)
        self.send("!done", {"ret": reply.ret} if reply.ret is not None else None, tag)

    def trap(self, exc: Trap, tag: str | None) -> None:
        attrs = {} if exc.category is None else {"category": str(exc.category)}
        attrs["message"] = exc.message
        self.send("!trap", attrs, tag)
        self.send("!done", None, tag)

    def cancel(self, s: Sentence) -> None:
        """``/cancel [=tag=T]``: the streams' interrupted traps, the cancel's ``!done``, then
        each stream's ``!done`` (the order RouterOS sends them in)."""
        stopped = self.streams.cancel(s.args.get("tag"))
        for stream in stopped:
            self.trap_only(interrupted(), stream.tag)
        self.send("!done", None, s.tag)
        for stream in stopped:
            self.send("!done", None, stream.tag)

    def trap_only(self, exc: Trap, tag: str | None) -> None:
        attrs = {} if exc.category is None else {"category": str(exc.category)}
        self.send("!trap", {**attrs, "message": exc.message}, tag)

    def empty_reply(self) -> bool:
        return version_tuple(self.device.load().version)[:2] >= EMPTY_REPLY_SINCE

    def dispatch(self, s: Sentence) -> Reply | None:
        if s.command == "/login":
            return self.login(s)
        if s.command == "/quit":
            raise Fatal("session terminated on request")
        if not s.command.startswith("/"):
            raise no_such_command()
        path, _, command = s.command.rpartition("/")
        version = self.device.load().version
        menu = MENUS.get(path)
        if menu is not None and not available(menu, version):
            menu = None  # a menu this RouterOS version does not have yet
        if menu is None:
            dirs = directories(version)
            if path not in dirs:
                self.trap_missing_directory(path, s.tag, dirs)
            raise no_such_command()
        if command == "listen" and "print" in menu.commands:
            self.listen(menu, s)
            return None
        handler = menu.commands.get(command)
        if handler is None:
            raise no_such_command()
        args = dict(s.args)
        pl = args.pop(".proplist", None)
        if "numbers" in args:
            args["numbers"] = self.positions(menu, args["numbers"])
        request = Request(path=path, command=command, args=args, queries=s.queries,
                          proplist=pl.split(",") if pl is not None else None)
        if command == "print" and any(k in args for k in PRINT_STREAMING):
            self.print_stream(menu, request, s.tag)
            return None
        if command == "monitor" and "once" not in args:
            self.monitor_stream(menu, request, s.tag)
            return None
        reply = handler(self.device, request)
        if reply.ids is not None:
            self.numbered[path] = reply.ids
        return reply

    def positions(self, menu: Menu, numbers: str) -> str:
        """``=numbers=`` with position numbers (``0``, ``0,2``) turned into the items' ids."""
        parts = [p for p in numbers.split(",") if p]
        if not any(p.isdigit() for p in parts):
            return numbers
        ids = self.numbered.get(menu.path)
        if ids is None:  # no print yet in this session: the whole menu, in order
            ids = menu.commands["print"](self.device, Request(menu.path, "print")).ids or []
        out: list[str] = []
        for part in parts:
            if part.isdigit():
                index = int(part)
                if index >= len(ids) or not ids[index]:
                    raise no_such_item()
                part = ids[index]
            out.append(part)
        return ",".join(out)

    # --- streams ------------------------------------------------------------------------------

    def listen(self, menu: Menu, s: Sentence) -> None:
        req = Request(path=menu.path, command="listen", args=s.args, queries=s.queries)
        check_args(req, (".proplist",))
        printer = menu.commands["print"]

        def rows() -> list[Row]:
            return printer(self.device, Request(menu.path, "print", queries=s.queries)).rows

        pl = s.args.get(".proplist")
        cut = Request(menu.path, "print", proplist=pl.split(",") if pl else None)
        self.streams.start(s.tag, follow(rows, lambda r: proplist(r, cut), initial=False))

    def print_stream(self, menu: Menu, req: Request, tag: str | None) -> None:
        printer = menu.commands["print"]
        args = {k: v for k, v in req.args.items() if k not in PRINT_STREAMING}
        printer(self.device, replace(req, args=args))  # its traps before anything streams
        if "interval" in req.args:
            interval = parse_time("interval", req.args["interval"])

            def every() -> list[Row]:
                return printer(self.device, replace(req, args=args)).rows

            self.streams.start(tag, repeat(every, max(interval, 0.05)))
            return

        def rows() -> list[Row]:
            return printer(self.device, replace(req, args=args, proplist=None)).rows

        body = follow(rows, lambda r: proplist(r, req), initial="follow" in req.args)
        self.streams.start(tag, body)

    def monitor_stream(self, menu: Menu, req: Request, tag: str | None) -> None:
        monitor = menu.commands["monitor"]
        once = replace(req, args={**req.args, "once": ""})
        monitor(self.device, once)  # a bad item or argument traps at once
        interval = MONITOR_INTERVAL_S
        if "interval" in req.args:
            interval = max(parse_time("interval", req.args["interval"]), 0.05)
        duration = parse_time("duration", req.args["duration"]) if req.args.get(
            "duration") else None

        def rows() -> list[Row]:
            return monitor(self.device, once).rows

        self.streams.start(tag, repeat(rows, interval, duration))

    def trap_missing_directory(self, path: str, tag: str | None,
                               dirs: set[str] = DIRECTORIES) -> None:
        """RouterOS names the first unknown directory (category 0), then says ``no such
        command prefix``."""
        parts = path.split("/")
        missing = next(
            parts[i] for i in range(1, len(parts)) if "/".join(parts[: i + 1]) not in dirs
        )
        self.send("!trap", {"category": "0",
                            "message": f"no such command or directory ({missing})"}, tag)
        raise Trap("no such command prefix")

    def login(self, s: Sentence) -> Reply:
        """6.43+ login only: ``=name=`` and ``=password=`` in plain text. The pre-6.43
        challenge (``/login`` alone, then ``=response=``) went in 6.45.1: refused."""
        state = self.device.load()
        name = s.args.get("name")
        ok = (name is not None and "response" not in s.args
              and hmac.compare_digest(name.encode("utf-8", "surrogateescape"),
                                      state.username.encode())
              and hmac.compare_digest(s.args.get("password", "").encode(
                  "utf-8", "surrogateescape"), state.password.encode()))
        if not ok:
            raise Trap(LOGIN_FAILED)
        if self._active is None:
            try:
                address = str(self.sock.getpeername()[0])
            except (OSError, IndexError):
                address = ""
            self._active = self.device.active_users.login(state.username, address, "api",
                                                          self.device.now())
        self.user = name
        return Reply()
