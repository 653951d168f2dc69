"""One API connection: login, sentence parsing, dispatch to menus, reply sentences."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import socket
from dataclasses import dataclass, field

from .codec import ConnectionClosed, ProtocolError, WordReader, encode_sentence
from .device import Device
from .errors import Fatal, Trap
from .kernel import KernelError
from .menus import MENUS, available, directories
from .menus.base import Reply, Request
from .platform import version_tuple

log = logging.getLogger(__name__)

LOGIN_FAILED = "invalid user name or password (6)"
EMPTY_REPLY_SINCE = (7, 18)


DIRECTORIES = directories()


@dataclass
class Sentence:
    """A request sentence split into its kinds of words."""

    command: str
    args: dict[str, str] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    tag: str | None = None


def parse_sentence(words: list[bytes]) -> Sentence:
    text = [w.decode("utf-8", errors="replace") for w in words]
    sentence = Sentence(command=text[0])
    for word in text[1:]:
        if word.startswith("="):
            name, _, value = word[1:].partition("=")
            sentence.args[name] = value
        elif word.startswith("?"):
            sentence.queries.append(word[1:])
        elif word.startswith(".tag="):
            sentence.tag = word[len(".tag=") :]
        else:
            raise Trap("unknown parameter")
    return sentence


class Session:
    """Serves one client socket until it quits, breaks the protocol or disconnects."""

    def __init__(self, sock: socket.socket, device: Device) -> None:
        self.sock = sock
        self.device = device
        self.reader = WordReader(sock.recv)
        self.user: str | None = None
        self.challenge: bytes | None = None

    def send(self, kind: str, attrs: dict[str, str] | None = None, tag: str | None = None) -> None:
        words = [kind, *(f"={k}={v}" for k, v in (attrs or {}).items())]
        if tag is not None:
            words.append(f".tag={tag}")
        self.sock.sendall(encode_sentence(words))

    def fatal(self, reason: str) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall(encode_sentence(["!fatal", reason]))

    def run(self) -> None:
        try:
            while True:
                words = self.reader.read_sentence()
                self.handle(words)
        except ConnectionClosed:
            return
        except ProtocolError as exc:
            self.fatal(str(exc))
        except Fatal as exc:
            self.fatal(str(exc))
        except OSError:
            return

    def handle(self, words: list[bytes]) -> None:
        tag: str | None = None
        if self.user is None and words[0] != b"/login":
            raise Fatal("not logged in")
        try:
            sentence = parse_sentence(words)
            tag = sentence.tag
            reply = self.dispatch(sentence)
        except Trap as exc:
            self.trap(exc, tag)
            return
        except KernelError as exc:
            self.trap(Trap(f"failure: {exc}"), tag)
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

    def empty_reply(self) -> bool:
        return version_tuple(self.device.load().version)[:2] >= EMPTY_REPLY_SINCE

    def dispatch(self, s: Sentence) -> Reply:
        if s.command == "/login":
            return self.login(s)
        if s.command == "/quit":
            raise Fatal("session terminated on request")
        if s.command == "/cancel":
            return Reply()
        if not s.command.startswith("/"):
            raise Trap("no such command")
        path, _, command = s.command.rpartition("/")
        version = self.device.load().version
        menu = MENUS.get(path)
        if menu is not None and not available(menu, version):
            menu = None  # a menu this RouterOS version does not have yet
        if menu is None:
            dirs = directories(version)
            if path not in dirs:
                self.trap_missing_directory(path, s.tag, dirs)
            raise Trap("no such command")
        handler = menu.commands.get(command)
        if handler is None:
            raise Trap("no such command")
        proplist = s.args.pop(".proplist", None)
        request = Request(
            path=path,
            command=command,
            args=s.args,
            queries=s.queries,
            proplist=proplist.split(",") if proplist is not None else None,
        )
        return handler(self.device, request)

    def trap_missing_directory(self, path: str, tag: str | None,
                               dirs: set[str] = DIRECTORIES) -> None:
        """RouterOS names the first unknown directory, then says ``no such command prefix``."""
        parts = path.split("/")
        missing = next(
            parts[i] for i in range(1, len(parts)) if "/".join(parts[: i + 1]) not in dirs
        )
        self.send("!trap", {"message": f"no such command or directory ({missing})"}, tag)
        raise Trap("no such command prefix")

    def login(self, s: Sentence) -> Reply:
        state = self.device.load()
        name = s.args.get("name")
        if name is None and "password" not in s.args and "response" not in s.args:
            self.challenge = os.urandom(16)  # pre-6.43 clients ask for a challenge first
            return Reply(ret=self.challenge.hex())
        ok = name == state.username
        if "password" in s.args:
            ok = ok and hmac.compare_digest(s.args["password"], state.password)
        elif "response" in s.args and self.challenge is not None:
            digest = hashlib.md5(b"\x00" + state.password.encode() + self.challenge).hexdigest()
            ok = ok and hmac.compare_digest(s.args["response"], "00" + digest)
        else:
            ok = False
        if not ok:
            raise Trap(LOGIN_FAILED)
        self.user = name
        return Reply()
