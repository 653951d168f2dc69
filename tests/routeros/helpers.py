"""Test helpers: the lab record and a raw wire-protocol client."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.codec import WordReader, encode_sentence
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.server import ApiServer

T = TypeVar("T")

CABLED = {"qsfp56-dd-1-1": 200, "qsfp56-dd-1-5": 200, "qsfp56-dd-2-1": 400}
USER, PASSWORD = "admin", "s3cret=="
MGMT_ADDRESS = "198.18.3.10/24"


@dataclass
class Lab:
    device: Device
    backend: FakeBackend
    server: ApiServer
    state_path: Path

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


class RawClient:
    """Speaks the wire protocol directly, to see every sentence the server sends."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.reader = WordReader(self.sock.recv)

    def send(self, *words: str) -> None:
        self.sock.sendall(encode_sentence(words))

    def read(self) -> list[str]:
        return [w.decode() for w in self.reader.read_sentence()]

    def talk(self, *words: str) -> list[list[str]]:
        """Send one sentence, read replies up to and including the final ``!done``/``!fatal``."""
        self.send(*words)
        replies: list[list[str]] = []
        while True:
            sentence = self.read()
            replies.append(sentence)
            if sentence[0] in ("!done", "!fatal"):
                return replies

    def login(self) -> None:
        assert self.talk("/login", f"=name={USER}", f"=password={PASSWORD}") == [["!done"]]

    def close(self) -> None:
        self.sock.close()


def eventually(probe: Callable[[], T], timeout: float = 5.0, step: float = 0.01) -> T:
    """``probe()`` once it is truthy (the observer threads work asynchronously), polled up to
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {value!r}")
        time.sleep(step)


class FakeClock:
    """A switch clock that moves only when a test moves it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def local_epoch(text: str) -> float:
    """``2026-12-01 09:30:00`` in the process's local time, as epoch seconds."""
    return time.mktime(time.strptime(text, "%Y-%m-%d %H:%M:%S"))
