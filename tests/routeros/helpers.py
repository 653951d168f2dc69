"""Test helpers: the lab record and a raw wire-protocol client."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

from fabric.lab.routeros.backend import FakeBackend
from fabric.lab.routeros.codec import WordReader, encode_sentence
from fabric.lab.routeros.device import Device
from fabric.lab.routeros.server import ApiServer

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
