"""Naming rules of a lab: namespaces, the management bridge, veths, state paths."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from fabric.errors import InputError

#: Where every lab keeps its state (one directory per lab).
LABS_ROOT = Path("/run/fabric/labs")
DEFAULT_LAB = "lab"
#: The Spark's management netdev (DOMAIN.md) and the switch's, named like a RouterOS port.
SPARK_MGMT_IF = "enP7s7"
SWITCH_MGMT_IF = "ether1"
#: The Spark's admin login: a normal user with sudo, as on DGX OS (never root).
SPARK_USER = "dgxadmin"
#: MTU of the hidden cable end that a Spark's two twins (macvlans) share.
LOWER_MTU = 9216
IFNAMSIZ = 15

_LAB_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}$")


def check_lab_name(name: str) -> str:
    """Return `name` if it can name a lab (lower-case letters, digits, '-'), else InputError."""
    if not _LAB_RE.match(name):
        raise InputError(f"bad lab name {name!r}: use 1-24 of a-z, 0-9 and '-', starting "
                         "with a letter or digit")
    return name


def netns(lab: str, host: str) -> str:
    """`NAME-<host>`, e.g. `lab-spark01` (the Lab contract)."""
    return f"{lab}-{host}"


def _short(prefix: str, text: str) -> str:
    name = f"{prefix}{text}"
    if len(name) <= IFNAMSIZ:
        return name
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"{prefix}{digest[: IFNAMSIZ - len(prefix)]}"


def bridge(lab: str) -> str:
    """The root-namespace management bridge of a lab (at most 15 characters)."""
    return _short("fl-", lab)


def mgmt_veth(slot: int, host: str) -> str:
    """The root-namespace end of a host's management veth."""
    return _short(f"fl{slot}-", host)


def lower(port: str) -> str:
    """The hidden cable end inside a Spark that both twins of `port` ride on."""
    return f"cx7-{port}"


#: The host name a lab's patch panel takes in its namespace's name (no inventory host may).
PANEL_HOST = "dac-panel"


def panel_netns(lab: str) -> str:
    """`NAME-dac-panel`: the namespace holding the Spark-to-Spark cables of a lab."""
    return netns(lab, PANEL_HOST)


def panel_end(host: str, port: str) -> str:
    """The patch-panel end of `host`'s `port` (the veth peer of its hidden cable end)."""
    return _short("", f"{host}-{port}")


def panel_slot(index: int) -> str:
    """The bridge that is the `index`-th Spark-to-Spark cable (1-based, intent order)."""
    return f"dac{index}"
