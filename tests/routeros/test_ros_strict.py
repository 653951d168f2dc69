"""The API as strict as RouterOS for an independent client (DOMAIN.md, field reports): position
numbers in `=numbers=`, the tag on a trap for a sentence that did not parse, bytes passed
through as they are, `=category=` on the missing-item and missing-command traps, and no
pre-6.45 challenge login. Everything goes through a real socket."""

from __future__ import annotations

from typing import Any

import pytest
import routeros_api
from routeros_api.exceptions import RouterOsApiCommunicationError

from fabric.lab.routeros.codec import encode_sentence

from .conftest import connect
from .helpers import PASSWORD, USER, Lab, RawClient

ETH = "/interface/ethernet"


def names(replies: list[list[str]]) -> list[str]:
    return [w.split("=", 2)[2] for s in replies if s[0] == "!re" for w in s
            if w.startswith("=name=")]


# --- position numbers -----------------------------------------------------------------------


def test_numbers_are_positions_of_the_last_print(lab: Lab, raw: RawClient) -> None:
    raw.login()
    printed = names(raw.talk(f"{ETH}/print", "=.proplist=name", "?running=true"))
    assert printed == ["qsfp56-dd-1-1", "qsfp56-dd-1-5", "qsfp56-dd-2-1", "ether1"]
    assert raw.talk(f"{ETH}/set", "=numbers=1", "=mtu=9000") == [["!done"]]
    assert lab.backend.links()["qsfp56-dd-1-5"].mtu == 9000
    assert raw.talk(f"{ETH}/set", "=numbers=0,2", "=comment=picked") == [["!done"]]
    picked = names(raw.talk(f"{ETH}/print", "=.proplist=name", "?comment=picked"))
    assert picked == ["qsfp56-dd-1-1", "qsfp56-dd-2-1"]
    # the print just made numbers its two rows: position 2 is no item now
    assert raw.talk(f"{ETH}/set", "=numbers=2", "=mtu=1500") == [
        ["!trap", "=category=0", "=message=no such item"], ["!done"]]
    # ids and names still work, mixed with positions
    assert raw.talk(f"{ETH}/set", "=numbers=*1,1", "=mtu=9100") == [["!done"]]
    assert lab.backend.links()["qsfp56-dd-2-1"].mtu == 9100


def test_numbers_without_a_print_count_the_whole_menu(lab: Lab, raw: RawClient) -> None:
    raw.login()
    assert raw.talk(f"{ETH}/set", "=numbers=4", "=mtu=9000") == [["!done"]]
    assert lab.backend.links()["qsfp56-dd-1-5"].mtu == 9000  # the fifth lane, *5


def test_positions_after_a_print_drive_monitor_like_an_exporter(lab: Lab, api: Any) -> None:
    """mktxp's interface monitor: print name,comment,running, then `monitor once` with
    `numbers` set to each row's position in that print."""
    eth = api.get_resource(ETH)
    printed = eth.call("print", {".proplist": "name,comment,running"})
    running = [i for i, row in enumerate(printed) if row["running"] == "true"]
    for index in running:
        [row] = eth.call("monitor", {"once": "", "numbers": str(index)})
        assert row["name"] == printed[index]["name"] and row["status"] == "link-ok"


# --- tags on a sentence that did not parse --------------------------------------------------


def test_a_sentence_that_does_not_parse_is_answered_with_its_tag(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/interface/print", "bogus", ".tag=7") == [
        ["!trap", "=message=unknown parameter", ".tag=7"], ["!done", ".tag=7"]]
    assert raw.talk("/interface/print", ".tag=8", "bogus") == [
        ["!trap", "=message=unknown parameter", ".tag=8"], ["!done", ".tag=8"]]
    assert raw.talk("/system/identity/print", ".tag=9") == [
        ["!re", "=name=crs804", ".tag=9"], ["!done", ".tag=9"]]


# --- bytes ------------------------------------------------------------------------------------

RAW_VALUE = b"caf\xc3\xa9 \xff\xfe\x80 \xe9t\xe9"  # UTF-8, then bytes that are not UTF-8


def test_bytes_that_are_not_utf8_round_trip(raw: RawClient) -> None:
    raw.login()
    raw.sock.sendall(encode_sentence(
        [f"{ETH}/set".encode(), b"=numbers=qsfp56-dd-1-1", b"=comment=" + RAW_VALUE]))
    assert raw.reader.read_sentence() == [b"!done"]
    raw.sock.sendall(encode_sentence(
        [f"{ETH}/print".encode(), b"=.proplist=name,comment", b"?comment=" + RAW_VALUE]))
    assert raw.reader.read_sentence() == [b"!re", b"=name=qsfp56-dd-1-1",
                                          b"=comment=" + RAW_VALUE]
    assert raw.reader.read_sentence() == [b"!done"]
    raw.sock.sendall(encode_sentence([b"/system/identity/set", b"=name=sw\xff\x01"]))
    assert raw.reader.read_sentence() == [b"!done"]
    raw.sock.sendall(encode_sentence([b"/system/identity/print"]))
    assert raw.reader.read_sentence() == [b"!re", b"=name=sw\xff\x01"]


def test_bytes_round_trip_with_routeros_apis_binary_resource(api: Any) -> None:
    eth = api.get_binary_resource(ETH)
    eth.call("set", {"numbers": b"qsfp56-dd-2-1", "comment": RAW_VALUE})
    [row] = eth.call("print", {".proplist": b"name,comment"}, {"name": b"qsfp56-dd-2-1"})
    assert row == {"name": b"qsfp56-dd-2-1", "comment": RAW_VALUE}


# --- trap categories --------------------------------------------------------------------------


@pytest.mark.parametrize(("words", "trap"), [
    (("/interface/frobnicate",), ["!trap", "=category=0", "=message=no such command"]),
    (("/export",), ["!trap", "=category=0", "=message=no such command"]),
    ((f"{ETH}/set", "=.id=*99", "=mtu=9000"), ["!trap", "=category=0", "=message=no such item"]),
    ((f"{ETH}/set", "=numbers=nope", "=mtu=9000"),
     ["!trap", "=category=0", "=message=no such item"]),
    (("/ip/address/remove", "=.id=*99"), ["!trap", "=category=0", "=message=no such item"]),
])
def test_missing_items_and_commands_are_category_0(raw: RawClient, words: tuple[str, ...],
                                                   trap: list[str]) -> None:
    raw.login()
    assert raw.talk(*words) == [trap, ["!done"]]


def test_an_unknown_directory_is_category_0_then_the_prefix_trap(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/system/routerboard/print", ".tag=r") == [
        ["!trap", "=category=0", "=message=no such command or directory (routerboard)",
         ".tag=r"],
        ["!trap", "=message=no such command prefix", ".tag=r"],
        ["!done", ".tag=r"],
    ]


# --- login ------------------------------------------------------------------------------------


def test_no_challenge_login_any_more(raw: RawClient) -> None:
    """7.x offers no pre-6.43 challenge: a /login without name and password is refused, and
    so is the old `=response=`; the session stays unauthenticated."""
    failed = [["!trap", "=message=invalid user name or password (6)"], ["!done"]]
    assert raw.talk("/login") == failed
    assert raw.talk("/login", f"=name={USER}", "=response=00" + "0" * 32) == failed
    assert raw.talk("/system/identity/print") == [["!fatal", "not logged in"]]


def test_a_challenge_login_client_is_refused(lab: Lab) -> None:
    pool = routeros_api.RouterOsApiPool("127.0.0.1", username=USER, password=PASSWORD,
                                        port=lab.port, plaintext_login=False)
    with pytest.raises(RouterOsApiCommunicationError, match="invalid user name or password"):
        pool.get_api()
    good = connect(lab)
    assert good.get_api().get_resource("/system/identity").get()[0]["name"] == "crs804"
    good.disconnect()


def test_the_console_shows_those_bytes_as_they_are(lab: Lab, raw: RawClient) -> None:
    """What the API stored byte for byte, the SSH console (Netmiko's side) shows the same."""
    import io

    from fabric.lab.routeros.shell import run_shell

    raw.login()
    raw.sock.sendall(encode_sentence(
        [f"{ETH}/set".encode(), b"=numbers=qsfp56-dd-1-1", b"=comment=" + RAW_VALUE]))
    assert raw.reader.read_sentence() == [b"!done"]
    typed = b"/interface ethernet print detail where comment=\"" + RAW_VALUE + b"\"\n/quit\n"
    stdin = io.TextIOWrapper(io.BytesIO(typed), encoding="utf-8")
    shown = io.BytesIO()
    stdout = io.TextIOWrapper(shown, encoding="utf-8", write_through=True)
    assert run_shell(lab.device, stdin, stdout) == 0
    stdout.flush()
    assert b'comment="' + RAW_VALUE + b'"' in shown.getvalue()
    assert b"name=qsfp56-dd-1-1" in shown.getvalue()
