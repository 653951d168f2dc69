"""RouterOS API wire format: length-prefixed words, sentences ended by an empty word."""

from __future__ import annotations

from collections.abc import Callable, Iterable

MAX_WORD_LENGTH = 0xFFFFFFFF
RESERVED_FIRST_BYTE = 0xF8


class ProtocolError(Exception):
    """The peer broke the wire format (reserved control byte, truncated stream, bad length)."""


class ConnectionClosed(ProtocolError):
    """The peer closed the connection (cleanly between sentences or in the middle of one)."""


def encode_length(length: int) -> bytes:
    """Encode a word length in the 1..5 byte RouterOS form."""
    if length < 0 or length > MAX_WORD_LENGTH:
        raise ValueError(f"word length out of range: {length}")
    if length < 0x80:
        return length.to_bytes(1, "big")
    if length < 0x4000:
        return (length | 0x8000).to_bytes(2, "big")
    if length < 0x200000:
        return (length | 0xC00000).to_bytes(3, "big")
    if length < 0x10000000:
        return (length | 0xE0000000).to_bytes(4, "big")
    return b"\xf0" + length.to_bytes(4, "big")


def decode_length(read: Callable[[int], bytes]) -> int:
    """Read one encoded length through ``read(n)`` (which returns exactly n bytes or raises)."""
    first = read(1)[0]
    if first >= RESERVED_FIRST_BYTE:
        raise ProtocolError(f"reserved control byte 0x{first:02X}")
    if first < 0x80:
        return first
    if first < 0xC0:
        return int.from_bytes(bytes([first & 0x3F]) + read(1), "big")
    if first < 0xE0:
        return int.from_bytes(bytes([first & 0x1F]) + read(2), "big")
    if first < 0xF0:
        return int.from_bytes(bytes([first & 0x0F]) + read(3), "big")
    return int.from_bytes(read(4), "big")


#: How the emulator turns words into text and back: RouterOS words are bytes, not UTF-8, so a
#: byte that is not UTF-8 is kept as a surrogate and written back as the same byte.
WORD_ERRORS = "surrogateescape"


def decode_word(word: bytes) -> str:
    return word.decode("utf-8", WORD_ERRORS)


def encode_word(word: str | bytes) -> bytes:
    """Length prefix plus the bytes of one word (text as ``decode_word`` made it)."""
    data = word.encode("utf-8", WORD_ERRORS) if isinstance(word, str) else word
    return encode_length(len(data)) + data


def encode_sentence(words: Iterable[str | bytes]) -> bytes:
    """All words of a sentence followed by the terminating zero-length word."""
    return b"".join(encode_word(w) for w in words) + b"\x00"


class WordReader:
    """Reads words and sentences from a blocking binary stream (``recv``-like callable)."""

    def __init__(self, recv: Callable[[int], bytes], max_word: int = 1 << 20) -> None:
        self._recv = recv
        self._max_word = max_word

    def read_exact(self, n: int) -> bytes:
        chunks: list[bytes] = []
        left = n
        while left:
            chunk = self._recv(min(left, 65536))
            if not chunk:
                raise ConnectionClosed("connection closed by peer")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read_word(self) -> bytes:
        length = decode_length(self.read_exact)
        if length > self._max_word:
            raise ProtocolError(f"word too long: {length} bytes")
        return self.read_exact(length) if length else b""

    def read_sentence(self) -> list[bytes]:
        """Words up to (not including) the empty terminator; empty sentences are skipped."""
        while True:
            words: list[bytes] = []
            while True:
                word = self.read_word()
                if not word:
                    break
                words.append(word)
            if words:
                return words
