"""Meta-test: the registry holds exactly these checks, each in its family's module."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import validators
from validators import FAMILIES, REGISTRY, select

EXPECTED = [
    "link.twin_up", "link.speed", "link.switch_lane",
    "mtu.interface", "mtu.switch", "mtu.path",
    "addr.plan", "addr.unique", "addr.twin_subnets",
    "route.no_default", "route.no_mgmt",
    "gid.present", "gid.index",
    "cabling.lldp",
    "bw.link",
    "counters.flaps", "counters.errors", "counters.drops", "counters.retrans", "counters.pause",
    "counters.lossless",
    "version.consistent",
    "time.offset",
    "forward.policy",
    "switch.bridge",
    "qos.consistent",
    "nccl.busbw",
    "host.pcie", "host.nm", "host.ipc", "host.memory", "host.image",
]
#: Families that live in another family's module.
MODULE_OF = {"route": "addr"}


def test_registry_contents_are_pinned() -> None:
    assert sorted(REGISTRY) == sorted(EXPECTED)


def test_every_check_lives_in_its_family_module_and_says_what_it_judges() -> None:
    for name, fn in REGISTRY.items():
        family = name.split(".")[0]
        assert family in FAMILIES
        assert fn.__module__ == f"validators.{MODULE_OF.get(family, family)}", name
        assert fn.__doc__ and "judges" in fn.__doc__.lower(), name


def test_every_family_has_checks_and_a_module() -> None:
    helpers = {"registry", "judge"}
    modules = {m.name for m in pkgutil.iter_modules(validators.__path__)} - helpers
    for mod in modules:
        importlib.import_module(f"validators.{mod}")
    assert modules == {MODULE_OF.get(f, f) for f in FAMILIES}
    assert {n.split(".")[0] for n in REGISTRY} == set(FAMILIES)


def test_select_by_family_and_name() -> None:
    assert select({"mtu"}) == ["mtu.interface", "mtu.switch", "mtu.path"]
    assert select({"addr.plan", "link"}) == ["link.twin_up", "link.speed", "link.switch_lane",
                                             "addr.plan"]
    from fabric.errors import InputError

    with pytest.raises(InputError, match="unknown check"):
        select({"mtu.nope"})


def test_every_result_is_explained_and_every_check_runs_on_empty_facts() -> None:
    """On empty facts every check still answers (errors naming the host, skips saying why),
    and no check crashes; every result carries a message, every non-pass a hint or a skip."""
    from fabric.facts import Facts
    from tests.validators import builder
    from validators import run_checks

    for name in ("star4", "ring4"):
        intent = builder.intent(name)
        empty = Facts(collected="2026-11-30T00:00:00+00:00", topology=name,
                      errors={h.name: "unreachable" for h in intent.sparks})
        results = run_checks(intent, empty)
        assert {r.check for r in results} == set(REGISTRY), name
        assert not [r for r in results if "crashed" in r.message]
        for r in results:
            assert r.message, r
            assert r.status in ("pass", "skip") or r.hint, r
