"""The API protocol over a real socket: login, tags, traps, !empty, !fatal, queries, proplist."""

from __future__ import annotations

import socket
import threading

import pytest
import routeros_api
from routeros_api.exceptions import RouterOsApiCommunicationError

from .helpers import PASSWORD, USER, Lab, RawClient


def test_login_good(raw: RawClient) -> None:
    assert raw.talk("/login", f"=name={USER}", f"=password={PASSWORD}") == [["!done"]]


def test_login_bad_is_trap_then_done_and_connection_stays(raw: RawClient) -> None:
    reply = raw.talk("/login", "=name=admin", "=password=wrong")
    assert reply == [["!trap", "=message=invalid user name or password (6)"], ["!done"]]
    raw.login()
    assert raw.talk("/system/identity/print") == [["!re", "=name=crs804"], ["!done"]]


def test_bad_login_with_real_client_raises(lab: Lab) -> None:
    pool = routeros_api.RouterOsApiPool(
        "127.0.0.1", username=USER, password="nope", port=lab.port, plaintext_login=True
    )
    with pytest.raises(RouterOsApiCommunicationError, match=r"invalid user name or password"):
        pool.get_api()


def test_command_before_login_is_fatal_and_closes(raw: RawClient) -> None:
    assert raw.talk("/interface/print") == [["!fatal", "not logged in"]]
    assert raw.sock.recv(1) == b""


def test_garbage_is_fatal_and_closes(raw: RawClient) -> None:
    raw.login()
    raw.sock.sendall(b"\xf8garbage")
    assert raw.read()[0] == "!fatal"
    assert raw.sock.recv(1) == b""


def test_quit_is_fatal_session_terminated(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/quit") == [["!fatal", "session terminated on request"]]


def test_tag_echoed_on_every_reply_only_when_sent(raw: RawClient) -> None:
    raw.login()
    tagged = raw.talk("/interface/print", "?type=ether", "?name=qsfp56-dd-1-1", ".tag=42")
    assert all(s[-1] == ".tag=42" for s in tagged)
    assert [s[0] for s in tagged] == ["!re", "!done"]
    untagged = raw.talk("/interface/print", "?name=qsfp56-dd-1-1")
    assert not any(w.startswith(".tag") for s in untagged for w in s)
    trap = raw.talk("/interface/ethernet/set", "=.id=nope", "=mtu=9000", ".tag=t1")
    assert trap == [["!trap", "=category=0", "=message=no such item", ".tag=t1"],
                    ["!done", ".tag=t1"]]


def test_print_with_no_results_is_empty_then_done(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/interface/bridge/print", ".tag=9") == [
        ["!empty", ".tag=9"],
        ["!done", ".tag=9"],
    ]


def test_old_version_has_no_empty_reply(lab: Lab, raw: RawClient) -> None:
    with lab.device.edit() as state:
        state.version = "7.17.2 (stable)"
    raw.login()
    assert raw.talk("/interface/bridge/print") == [["!done"]]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (("/foo/print",), "no such command prefix"),
        (("/interface/frobnicate",), "no such command"),
        (("/export",), "no such command"),
        (("/interface/ethernet/set", "=.id=*1", "=bogus=1"), "unknown parameter"),
        (("/interface/ethernet/set", "=mtu=9000"), "missing =.id="),
        (("/interface/ethernet/set", "=.id=*99", "=mtu=9000"), "no such item"),
    ],
)
def test_trap_texts(raw: RawClient, words: tuple[str, ...], message: str) -> None:
    raw.login()
    reply = raw.talk(*words)
    assert reply[-2][0] == "!trap"
    assert f"=message={message}" in reply[-2]
    assert reply[-1] == ["!done"]


def test_unknown_directory_names_it_first(raw: RawClient) -> None:
    raw.login()
    reply = raw.talk("/system/routerboard/print")
    assert reply == [
        ["!trap", "=category=0", "=message=no such command or directory (routerboard)"],
        ["!trap", "=message=no such command prefix"],
        ["!done"],
    ]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (("=speed=400G-baseXX",), "input does not match any value of speed"),
        (("=speed=200G",), "ambiguous value of speed, more than one possible value matches input"),
        (("=mtu=70000",), "value of mtu out of range (64..9570)"),
        (("=l2mtu=9600",), "value of l2mtu out of range (0..9570)"),
        (("=auto-negotiation=maybe",), "input does not match any value of auto-negotiation"),
    ],
)
def test_bad_values_are_category_1_traps(
    raw: RawClient, words: tuple[str, ...], message: str
) -> None:
    raw.login()
    reply = raw.talk("/interface/ethernet/set", "=.id=qsfp56-dd-1-1", *words)
    assert reply == [["!trap", "=category=1", f"=message={message}"], ["!done"]]


def test_bridge_port_interface_errors(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/interface/bridge/add", "=name=bridge1")[0] == ["!done", "=ret=*22"]
    nomatch = raw.talk("/interface/bridge/port/add", "=bridge=bridge1", "=interface=eth9")
    assert "=message=input does not match any value of interface" in nomatch[0]
    amb = raw.talk("/interface/bridge/port/add", "=bridge=bridge1", "=interface=qsfp56-dd-1")
    assert (
        "=message=ambiguous value of interface, more than one possible value matches input"
        in amb[0]
    )


def test_queries_and_stack_operations(raw: RawClient) -> None:
    raw.login()

    def names(*query: str) -> list[str]:
        replies = raw.talk("/interface/print", "=.proplist=name", *query)
        return [s[1].split("=", 2)[2] for s in replies if s[0] == "!re"]

    assert names("?name=qsfp56-dd-1-1") == ["qsfp56-dd-1-1"]
    assert names("?=name=qsfp56-dd-1-1") == ["qsfp56-dd-1-1"]
    assert names("?name=qsfp56-dd-1-1", "?name=qsfp56-dd-2-1", "?#|") == [
        "qsfp56-dd-1-1",
        "qsfp56-dd-2-1",
    ]
    assert names("?running=true", "?name=qsfp56-dd-1-1", "?#!&") == [
        "qsfp56-dd-1-5",
        "qsfp56-dd-2-1",
        "ether1",
    ]
    assert len(names("?type=ether", "?running=true", "?#&")) == 4
    assert len(names("?running=true", "?#!")) == 29
    assert names("?-comment", "?name=qsfp56-dd-4-8", "?#&") == ["qsfp56-dd-4-8"]
    assert names("?comment") == []
    assert names("?>name=qsfp56-dd-4-7") == ["qsfp56-dd-4-8"]
    assert names("?<name=qsfp56-dd-1-2") == ["qsfp56-dd-1-1", "ether1"]
    # index ops: 0 is the top; "0" at the end of a word keeps only that value
    assert names("?name=qsfp56-dd-1-1", "?name=qsfp56-dd-1-2", "?#1") == ["qsfp56-dd-1-1"]
    assert names("?name=qsfp56-dd-1-1", "?name=qsfp56-dd-1-2", "?#1.|") == ["qsfp56-dd-1-1"]


def test_proplist_limits_attributes(raw: RawClient) -> None:
    raw.login()
    reply = raw.talk("/interface/print", "=.proplist=.id,name,mtu", "?name=qsfp56-dd-1-1")
    assert reply[0] == ["!re", "=.id=*1", "=name=qsfp56-dd-1-1", "=mtu=1500"]


def test_count_only(raw: RawClient) -> None:
    raw.login()
    assert raw.talk("/interface/print", "=count-only=", "?type=ether") == [["!done", "=ret=33"]]


def test_concurrent_clients(lab: Lab) -> None:
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            client = RawClient(lab.port)
            client.login()
            for _ in range(10):
                reply = client.talk("/system/identity/print", f".tag={i}")
                assert reply == [["!re", "=name=crs804", f".tag={i}"], ["!done", f".tag={i}"]]
            client.close()
        except BaseException as exc:  # collected for the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert not errors


def test_server_survives_client_disconnect(lab: Lab) -> None:
    sock = socket.create_connection(("127.0.0.1", lab.port))
    sock.sendall(b"\x10/log")  # half a word, then gone
    sock.close()
    client = RawClient(lab.port)
    client.login()
    client.close()
