"""Host selection: only hosts of the topology; others are bad input (exit 2)."""

from __future__ import annotations

import pytest

from fabric.credentials import Credentials
from fabric.errors import InputError
from fabric.intent.build import load_intent
from fabric.push.apply import scope
from fabric.target import Target

from .helpers import INVENTORY


def _target(topology: str) -> Target:
    return Target(load_intent(topology), INVENTORY, Credentials())


def test_default_scope_is_sparks_and_switch() -> None:
    assert scope(_target("star4"), None) == ["crs804", "spark01", "spark02", "spark03",
                                             "spark04"]
    assert scope(_target("ring4"), None) == ["spark01", "spark02", "spark03", "spark04"]


def test_host_outside_the_topology_is_refused() -> None:
    with pytest.raises(InputError, match="--hosts: not in topology star4: spark07") as info:
        scope(_target("star4"), ["spark01", "spark07"])
    assert info.value.exit_code == 2
    with pytest.raises(InputError, match="dl360"):
        scope(_target("star4"), ["dl360"])


def test_a_push_session_drives_sparks_over_exec_channels_only() -> None:
    """Every Spark of a push run gets the exec-only session (`SPARK_SSH`: no interactive
    shell, no prompt probing); the switch keeps its Netmiko options (`/export terse` is read
    on its CLI)."""
    from fabric.push.runner import push_session
    from fabric.remote.exec import SPARK_SSH

    target = _target("star4")
    with push_session(target, scope(target, None), workers=4) as nr:
        options = {name: set(host.connection_options)
                   for name, host in nr.inventory.hosts.items()}
    assert {h: o for h, o in options.items() if h.startswith("spark")} == {
        h: {SPARK_SSH} for h in ("spark01", "spark02", "spark03", "spark04")}
    assert options["crs804"] == {"routeros_api", "netmiko"}
