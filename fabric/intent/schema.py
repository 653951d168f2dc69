"""Pydantic models of the input files (topology YAML, inventory). Errors name file/line/field."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ENDPOINT_RE = re.compile(r"^(?P<host>[A-Za-z0-9_.-]+):(?P<port>[A-Za-z0-9_./-]+)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkSpec(_Strict):
    """One cable, as the topology file writes it: `a` and `b` are `host:port`."""

    a: str
    b: str
    speed: Annotated[str, Field(pattern=r"^\d+G$")] | None = None
    cable: str = "dac"
    subnets: list[ipaddress.IPv4Network] | None = None

    @field_validator("a", "b")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        if not ENDPOINT_RE.match(value):
            raise ValueError(f"expected host:port, got {value!r}")
        return value


class SwitchSpec(_Strict):
    """The switch a star topology uses, and the mode of each of its ports."""

    host: str
    ports: dict[str, str]
    mtu: Annotated[int, Field(ge=1280, le=9570)] = 9000
    l2mtu: Annotated[int, Field(ge=1280, le=9570)] = 9216
    bridge: str = "bridge"


class AddressingSpec(_Strict):
    """Address pools. `rails` for a switch (one subnet per twin), `direct` for cables."""

    rails: list[ipaddress.IPv4Network] | None = None
    direct: ipaddress.IPv4Network | None = None
    direct_prefix: Annotated[int, Field(ge=8, le=30)] = 24


class TopologySpec(_Strict):
    """A topology file (`topologies/<name>.yaml`)."""

    name: str
    description: str = ""
    profile: str
    mtu: Annotated[int, Field(ge=1280, le=9216)]
    spark_port: Literal["p0", "p1"] | None = None
    switch: SwitchSpec | None = None
    addressing: AddressingSpec
    links: list[LinkSpec]
    #: `lossy`: the NICs' and the switch's defaults, left untouched (today's behaviour);
    #: `lossless`: RoCE in its own class at both ends (switch QoS + Sparks' mlnx_qos, ECN).
    qos: Literal["lossy", "lossless"] = "lossy"


class TwinSpec(_Strict):
    netdev: str
    rdma: str


class HostData(BaseModel):
    """The `data:` of an inventory host after group inheritance (only what intent reads)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    role: Literal["spark", "switch", "management"]
    node_id: Annotated[int, Field(ge=1, le=250)] | None = None
    status: Literal["in-service", "planned", "retired"] = "in-service"
    ups: str | None = None
    mgmt_interface: str | None = None
    model: str | None = None
    ports: dict[str, list[TwinSpec]] | None = None
    api_port: int | None = None


class HostSpec(_Strict):
    """One entry of a Nornir SimpleInventory hosts.yaml / groups.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hostname: str | None = None
    platform: str | None = None
    port: int | None = None
    username: str | None = None
    password: str | None = None
    groups: list[str] = []
    data: dict[str, object] = {}
    connection_options: dict[str, object] = {}
