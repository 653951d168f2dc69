"""What a fault's TARGET names in a lab, and the InputError (exit 2) of one naming nothing."""

from __future__ import annotations

import pytest

from fabric.errors import InputError
from fabric.intent.model import Endpoint
from fabric.lab.faults import inject, services
from fabric.lab.faults.targets import (
    Ctx,
    bounced_end,
    drop_senders,
    drop_spec,
    host_netdev,
    resolve_link,
    swap_links,
    switch_lane,
)


@pytest.mark.parametrize(("target", "link", "named"), [
    ("spark02:p0", "spark02:p0--crs804:qsfp56-dd-2-1", "spark02"),
    ("crs804:qsfp56-dd-3-1", "spark03:p0--crs804:qsfp56-dd-3-1", "crs804"),
    ("qsfp56-dd-4-1", "spark04:p0--crs804:qsfp56-dd-4-1", "crs804"),  # bare lane: the switch
    ("spark01:p0--crs804:qsfp56-dd-1-1", "spark01:p0--crs804:qsfp56-dd-1-1", "spark01"),
])
def test_a_target_names_a_cable_and_the_end_named(star: Ctx, target: str, link: str,
                                                  named: str) -> None:
    found, host = resolve_link(star, target)
    assert (found.id, host) == (link, named)


@pytest.mark.parametrize(("target", "message"), [
    ("spark09:p0", "spark09 is not a host of lab t-faults-paper (crs804, spark01"),
    ("qsfp56-dd-4-8", "crs804:qsfp56-dd-4-8 has no cable in lab t-faults-paper"),
    ("spark01:p7", "spark01:p7 has no cable"),
    ("spark01:p0--spark02:p0", "no link 'spark01:p0--spark02:p0' in lab t-faults-paper; "
                               "links: spark01:p0--crs804:qsfp56-dd-1-1"),
])
def test_a_target_naming_nothing_is_an_input_error(star: Ctx, target: str, message: str) -> None:
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(")):
        resolve_link(star, target)


def test_a_bare_port_needs_a_switch_to_be_a_lane(ring: Ctx) -> None:
    assert resolve_link(ring, "spark01:p0")[0].id == "spark01:p0--spark02:p1"
    with pytest.raises(InputError, match="is not a host of lab"):
        resolve_link(ring, "p0")
    with pytest.raises(InputError, match="lab t-faults-paper has no switch"):
        switch_lane(ring, "spark01:p0")


def test_switch_lane_is_the_switch_end_whichever_end_is_named(star: Ctx) -> None:
    assert switch_lane(star, "spark02:p0") == "qsfp56-dd-2-1"
    assert switch_lane(star, "qsfp56-dd-2-1") == "qsfp56-dd-2-1"


@pytest.mark.parametrize("target", ["spark01", "spark01:", "spark01enp1s0f0np0"])
def test_host_netdev_wants_both_halves(star: Ctx, target: str) -> None:
    with pytest.raises(InputError, match="expected HOST:NETDEV"):
        host_netdev(star, target)


def test_host_netdev_checks_the_host(star: Ctx) -> None:
    assert host_netdev(star, "spark04:enp1s0f0np0") == ("spark04", "enp1s0f0np0")
    with pytest.raises(InputError, match="spark09 is not a host"):
        host_netdev(star, "spark09:enp1s0f0np0")
    with pytest.raises(InputError, match=r"^ is not a host of lab"):
        host_netdev(star, ":enp1s0f0np0")


def test_swap_takes_two_ends_of_two_cables(star: Ctx) -> None:
    (la, ha), (lb, hb) = swap_links(star, "crs804:qsfp56-dd-1-1, spark02:p0")
    assert (la.id, ha, lb.id, hb) == ("spark01:p0--crs804:qsfp56-dd-1-1", "crs804",
                                      "spark02:p0--crs804:qsfp56-dd-2-1", "spark02")
    with pytest.raises(InputError, match="swap takes two cable ends A,B"):
        swap_links(star, "crs804:qsfp56-dd-1-1")
    with pytest.raises(InputError, match="swap takes two cable ends A,B"):
        swap_links(star, "spark01:p0,spark02:p0,spark03:p0")
    with pytest.raises(InputError, match="are the two ends of one cable"):
        swap_links(star, "spark01:p0,crs804:qsfp56-dd-1-1")


@pytest.mark.parametrize(("target", "spec"), [
    ("spark02:p0", ("spark02:p0", "both", 5.0)),
    ("spark02:p0@tx", ("spark02:p0", "tx", 5.0)),
    ("spark02:p0@rx,20%", ("spark02:p0", "rx", 20.0)),
    ("qsfp56-dd-4-1@12.5", ("qsfp56-dd-4-1", "both", 12.5)),
    ("spark02:p0@ 7% , tx", ("spark02:p0", "tx", 7.0)),
    ("spark02:p0@100%", ("spark02:p0", "both", 100.0)),
])
def test_drop_spec(target: str, spec: tuple[str, str, float]) -> None:
    assert drop_spec(target) == spec


@pytest.mark.parametrize(("target", "message"), [
    ("spark01:p0@sideways", r"drop takes TARGET\[@rx\|@tx\|@both\]\[,PCT%\]"),
    ("spark01:p0@0%", "drop share must be above 0 and at most 100 %, got '0%'"),
    ("spark01:p0@tx,101%", "drop share must be above 0 and at most 100 %, got '101%'"),
    ("spark01:p0@-5", "drop share must be above 0"),
])
def test_bad_drop_specs_are_input_errors(target: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        drop_spec(target)


@pytest.mark.parametrize(("target", "direction", "senders"), [
    ("spark02:p0", "tx", [("spark02", "p0")]),
    ("spark02:p0", "rx", [("crs804", "qsfp56-dd-2-1")]),
    ("spark02:p0", "both", [("spark02", "p0"), ("crs804", "qsfp56-dd-2-1")]),
    ("qsfp56-dd-2-1", "tx", [("crs804", "qsfp56-dd-2-1")]),
])
def test_drop_senders_as_seen_from_the_named_end(star: Ctx, target: str, direction: str,
                                                 senders: list[tuple[str, str]]) -> None:
    link, named = resolve_link(star, target)
    assert drop_senders(link, named, direction) == [Endpoint(*s) for s in senders]


def test_a_flap_bounces_the_spark_end_of_a_switch_cable(star: Ctx, ring: Ctx) -> None:
    end = bounced_end(star, *resolve_link(star, "qsfp56-dd-3-1"))
    assert (end.host, end.netdev) == ("spark03", "cx7-p0")
    end = bounced_end(ring, *resolve_link(ring, "spark03:p1"))
    assert (end.host, end.netdev) == ("spark03", "cx7-p1")


def test_an_unknown_kind_is_refused_before_the_lab_is_read() -> None:
    with pytest.raises(InputError, match="unknown fault 'melt'; faults: mtu, link-down, swap"):
        inject("no-such-lab", "melt", "spark01")


@pytest.mark.parametrize("target", ["crs804", "spark09"])
def test_time_wants_a_spark(star: Ctx, target: str) -> None:
    with pytest.raises(InputError, match=f"time: {target} is not a Spark of lab t-faults-paper"):
        services.time(star, target)


@pytest.mark.parametrize(("kind", "target"), [
    ("remove-ipc", "spark09"), ("image-drift", "spark12"), ("pcie-width", "spark16:p0"),
    ("nm-profile", "spark09:enp1s0f0np0")])
def test_a_spark_of_the_inventory_that_the_lab_lacks_is_input_error(
        star: Ctx, kind: str, target: str) -> None:
    """star4 builds four of the inventory's sixteen Sparks: a fault on another is bad input
    (exit 2), never a KeyError."""
    from fabric.lab.faults.kinds import KINDS

    with pytest.raises(InputError):
        KINDS[kind][0](star, target)
