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
    """Every Spark of a push run gets the exec-only session (no interactive shell, no prompt
    probing); the switch keeps its RouterOS driver (`/export terse` is read on its CLI)."""
    from fabric.push.runner import push_session
    from fabric.remote.transport import EXEC_PLATFORM

    target = _target("star4")
    with push_session(target, scope(target, None), workers=4) as nr:
        platforms = {name: host.connection_options["netmiko"].platform
                     for name, host in nr.inventory.hosts.items()}
    assert {h: p for h, p in platforms.items() if h.startswith("spark")} == dict.fromkeys(
        ["spark01", "spark02", "spark03", "spark04"], EXEC_PLATFORM)
    assert platforms["crs804"] != EXEC_PLATFORM
