"""Word length encoding at every boundary, both directions; reserved bytes; sentences."""

from __future__ import annotations

import io

import pytest

from fabric.lab.routeros.codec import (
    ConnectionClosed,
    ProtocolError,
    WordReader,
    decode_length,
    encode_length,
    encode_sentence,
)

BOUNDARIES = [
    (0, b"\x00"),
    (0x7F, b"\x7f"),
    (0x80, b"\x80\x80"),
    (0x3FFF, b"\xbf\xff"),
    (0x4000, b"\xc0\x40\x00"),
    (0x1FFFFF, b"\xdf\xff\xff"),
    (0x200000, b"\xe0\x20\x00\x00"),
    (0xFFFFFFF, b"\xef\xff\xff\xff"),
    (0x10000000, b"\xf0\x10\x00\x00\x00"),
]


@pytest.mark.parametrize(("length", "wire"), BOUNDARIES)
def test_encode_length_boundaries(length: int, wire: bytes) -> None:
    assert encode_length(length) == wire


@pytest.mark.parametrize(("length", "wire"), BOUNDARIES)
def test_decode_length_boundaries(length: int, wire: bytes) -> None:
    stream = io.BytesIO(wire)
    assert decode_length(stream.read) == length
    assert stream.read() == b""


@pytest.mark.parametrize("first", [0xF8, 0xF9, 0xFF])
def test_reserved_first_byte_is_a_protocol_error(first: int) -> None:
    with pytest.raises(ProtocolError, match="reserved"):
        decode_length(io.BytesIO(bytes([first, 0, 0, 0, 0])).read)


def test_sentence_roundtrip_with_long_and_equals_words() -> None:
    words = ["/interface/set", "=comment=" + "x" * 0x4000, "=name=a=b", ".tag=7"]
    reader = WordReader(io.BytesIO(encode_sentence(words) + encode_sentence(["/quit"])).read)
    assert [w.decode() for w in reader.read_sentence()] == words
    assert reader.read_sentence() == [b"/quit"]
    with pytest.raises(ConnectionClosed):
        reader.read_sentence()


def test_empty_sentences_are_skipped() -> None:
    reader = WordReader(io.BytesIO(b"\x00\x00" + encode_sentence(["/x"])).read)
    assert reader.read_sentence() == [b"/x"]


def test_truncated_word_is_connection_closed() -> None:
    with pytest.raises(ConnectionClosed):
        WordReader(io.BytesIO(b"\x05abc").read).read_word()
